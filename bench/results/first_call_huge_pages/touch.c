#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
int main(int c,char**v){MPI_Init(&c,&v);int r;MPI_Comm_rank(MPI_COMM_WORLD,&r);
 size_t bytes=48ul<<20; 
 MPI_Barrier(MPI_COMM_WORLD); double t=MPI_Wtime();
 char*p=mmap(0,bytes,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0); madvise(p,bytes,MADV_HUGEPAGE);
 for(size_t i=0;i<bytes;i+=4096)p[i]=1;
 t=MPI_Wtime()-t; double mx; MPI_Reduce(&t,&mx,1,MPI_DOUBLE,MPI_MAX,0,MPI_COMM_WORLD);
 char*q=mmap(0,bytes,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
 MPI_Barrier(MPI_COMM_WORLD); double t2=MPI_Wtime(); for(size_t i=0;i<bytes;i+=4096)q[i]=1; t2=MPI_Wtime()-t2; double mx2; MPI_Reduce(&t2,&mx2,1,MPI_DOUBLE,MPI_MAX,0,MPI_COMM_WORLD);
 if(!r)printf("touch 48 MiB per rank: huge pages %.3f s, 4 KiB pages %.3f s\n",mx,mx2);
 MPI_Finalize();}
