// SPDX-License-Identifier: BSD-3-Clause
// Hostile arguments for every public collective entry point of the C++ and C interfaces: each argument made
// invalid on every rank and on one rank only (tests/support/hostile.hpp says what is checked: the same error
// everywhere in bounded time, outputs and their guard zones untouched, the next valid call fine).
// redist-test-ranks: 1 2 3 4
// redist-test-labels: fast
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "hostile.hpp"
#include "random_layouts.hpp"
#include "redist/exchange/inplace.hpp"
#include "redist/redist.h"
#include "redist/redist.hpp"
#include "redist/torus/exchange.hpp"

using namespace redist;
using namespace redist::testing;

namespace {

std::size_t local_bytes(const grid_layout& g) { return static_cast<std::size_t>(g.local_elements()) * sizeof(double); }

std::vector<double> filled(const grid_layout& g, double base) {
  std::vector<double> v(static_cast<std::size_t>(g.local_elements()));
  std::iota(v.begin(), v.end(), base);
  return v;
}

int total_cases = 0;

void count(int runs) { total_cases += runs; }

}  // namespace

// ---- C++: transform engine ----

TEST(HostileCpp, MakePlanAndExecute) {
  const int me = world_rank(), p = world_size();
  const block_cyclic_params pa = square_params(12, 2, 1, p), pb = square_params(12, 3, p, 1);
  const grid_layout a = block_cyclic(pa, me), b = block_cyclic(pb, me);
  const std::vector<double> B = filled(b, me * 100.0);
  guarded_buffer A(local_bytes(a));
  // Plans and executes with the layouts and options `change` leaves (change applies this rank's bad value).
  const auto call_with = [&](const std::function<void(block_cyclic_params&, block_cyclic_params&, op&, element_type&,
                                                      transform_options&)>& change) {
    return [&, change](bool bad) {
      block_cyclic_params qa = pa, qb = pb;
      op operation = op::transpose;
      element_type type = element_type::f64;
      transform_options options;
      if (bad) change(qa, qb, operation, type, options);
      return outcome_of([&] {
        make_transform_plan(MPI_COMM_WORLD, block_cyclic(qa, me), block_cyclic(qb, me), operation, type, options)
            .execute(A.as<double>(), B.data(), 2.0, 0.0);
      });
    };
  };
  using P = block_cyclic_params;
  using T = transform_options;
  const std::vector<hostile_case> cases = {
      {"A's m (op(B) is 12 x 12)", call_with([](P& qa, P&, op&, element_type&, T&) { qa.m = 11; })},
      {"B's n", call_with([](P&, P& qb, op&, element_type&, T&) { qb.n = 13; })},
      {"A's lld too small", call_with([](P& qa, P&, op&, element_type&, T&) { qa.lld = 1; })},
      {"B's block size", call_with([](P&, P& qb, op&, element_type&, T&) { qb.mb = 4; }), invalid_on::one_rank_only},
      {"A's grid owner outside the communicator", call_with([p](P& qa, P&, op&, element_type&, T&) {
         qa.grid_ranks.assign(static_cast<std::size_t>(p), 0);
         qa.grid_ranks.back() = p;
       })},
      {"op not an op", call_with([](P&, P&, op& o, element_type&, T&) { o = static_cast<op>(9); })},
      {"op identity (A and B have other shapes after all)", call_with([](P& qa, P&, op& o, element_type&, T&) {
         qa.n = 10;
         o = op::identity;
       })},
      {"element type not a type",
       call_with([](P&, P&, op&, element_type& t, T&) { t = static_cast<element_type>(77); })},
      {"element type f32 (execute passes double)",
       call_with([](P&, P&, op&, element_type& t, T&) { t = element_type::f32; })},
      {"options.strategy not a strategy",
       call_with([](P&, P&, op&, element_type&, T& o) { o.strategy = static_cast<exchange_strategy>(9); })},
      {"options.strategy torus_routed without a torus",
       call_with([](P&, P&, op&, element_type&, T& o) { o.strategy = exchange_strategy::torus_routed; })},
      {"options.strategy alltoallv on one rank",
       call_with([](P&, P&, op&, element_type&, T& o) { o.strategy = exchange_strategy::alltoallv; }),
       invalid_on::one_rank_only},
      {"options.num_threads < 0", call_with([](P&, P&, op&, element_type&, T& o) { o.num_threads = -2; })},
      {"options.stores not a policy",
       call_with([](P&, P&, op&, element_type&, T& o) { o.stores = static_cast<store_policy>(5); })},
      {"options.stream_chunk_bytes < 0",
       call_with([](P&, P&, op&, element_type&, T& o) { o.stream_chunk_bytes = -1; })},
      {"options.stream_chunk_bytes on one rank",
       call_with([](P&, P&, op&, element_type&, T& o) { o.stream_chunk_bytes = 8192; }), invalid_on::one_rank_only},
      {"options.check_consistency off on one rank",
       call_with([](P&, P&, op&, element_type&, T& o) { o.check_consistency = false; }), invalid_on::one_rank_only},
  };
  const auto valid = call_with([](P&, P&, op&, element_type&, T&) {});
  count(run_hostile("make_transform_plan + execute", {&A}, cases, [&] { return valid(false); }));
}

TEST(HostileCpp, Execute) {
  const int me = world_rank(), p = world_size();
  // Every rank holds part of B (5 column blocks, at most 4 ranks), so a null B is wrong wherever it is passed.
  const grid_layout a = block_cyclic(square_params(10, 2, p, 1), me), b = block_cyclic(square_params(10, 2, 1, p), me);
  const transform_plan plan = make_transform_plan(MPI_COMM_WORLD, a, b, op::identity, element_type::f64);
  const std::vector<double> B = filled(b, me * 10.0);
  guarded_buffer A(local_bytes(a));
  std::vector<float> Bf(B.size());
  const auto valid = [&] { return outcome_of([&] { plan.execute(A.as<double>(), B.data(), 1.0, 0.0); }); };
  const std::vector<hostile_case> cases = {
      {"B null (alpha != 0)",
       [&](bool bad) {
         return outcome_of([&] { plan.execute<double>(A.as<double>(), bad ? nullptr : B.data(), 1.0, 0.0); });
       }},
      {"no job buffers",
       [&](bool bad) {
         return outcome_of([&] {
           plan.execute(bad ? std::vector<job_buffers>{}
                            : std::vector<job_buffers>{job_buffers{A.as<double>(), B.data()}});
         });
       }},
      {"two job buffers for one job",
       [&](bool bad) {
         std::vector<job_buffers> buffers{job_buffers{A.as<double>(), B.data()}};
         if (bad) buffers.push_back(buffers.front());
         return outcome_of([&] { plan.execute(buffers); });
       }},
      {"float buffers for a double plan",
       [&](bool bad) {
         return outcome_of([&] {
           if (bad)
             plan.execute<float>(A.as<float>(), Bf.data(), 1.0f, 0.0f);
           else
             plan.execute(A.as<double>(), B.data(), 1.0, 0.0);
         });
       }},
      {"A null",
       [&](bool bad) {
         return outcome_of([&] { plan.execute<double>(bad ? nullptr : A.as<double>(), B.data(), 1.0, 0.0); });
       }},
  };
  count(run_hostile("transform_plan::execute", {&A}, cases, valid));
}

TEST(HostileCpp, BatchAndInverse) {
  const int me = world_rank(), p = world_size();
  // Every rank holds part of A and of B (5 blocks, at most 4 ranks), so a null buffer is wrong on any rank.
  const grid_layout a = block_cyclic(square_params(10, 2, p, 1), me), b = block_cyclic(square_params(10, 2, 1, p), me);
  const std::vector<double> B = filled(b, me * 10.0);
  guarded_buffer A1(local_bytes(a)), A2(local_bytes(a));
  const auto batch = [&](bool bad, int which) {
    std::vector<job_description> jobs{{a, b, op::identity, element_type::f64},
                                      {a, b, op::transpose, element_type::f64}};
    if (bad && which == 0) jobs.pop_back();  // a job fewer on this rank
    if (bad && which == 1) jobs[1].region = element_region{static_cast<region_shape>(6), 0};
    if (bad && which == 2) jobs[0].region = element_region{region_shape::upper, 1};  // valid alone, must agree
    return outcome_of([&] {
      make_transform_plan(MPI_COMM_WORLD, jobs)
          .execute({job_buffers{A1.as<double>(), B.data()},
                    job_buffers{A2.as<double>(), B.data(), scalar(2.0), scalar(0.0)}});
    });
  };
  const std::vector<hostile_case> cases = {
      {"a job fewer", [&](bool bad) { return batch(bad, 0); }},
      {"region shape not a shape", [&](bool bad) { return batch(bad, 1); }},
      {"a job's region on one rank", [&](bool bad) { return batch(bad, 2); }, invalid_on::one_rank_only},
  };
  count(run_hostile("make_transform_plan (batch) + execute", {&A1, &A2}, cases, [&] { return batch(false, -1); }));

  // The inverse of a plan writes B from A: its checks are those of any plan.
  const transform_plan forward = make_transform_plan(MPI_COMM_WORLD, a, b, op::transpose, element_type::f64);
  const transform_plan backward = forward.inverse();
  const std::vector<double> Aread = filled(a, me * 3.0);
  guarded_buffer Bout(local_bytes(b));
  const std::vector<hostile_case> inverse_cases = {
      {"A null (alpha != 0)",
       [&](bool bad) {
         return outcome_of([&] { backward.execute<double>(Bout.as<double>(), bad ? nullptr : Aread.data()); });
       }},
      {"B null",
       [&](bool bad) {
         return outcome_of([&] { backward.execute<double>(bad ? nullptr : Bout.as<double>(), Aread.data()); });
       }},
  };
  count(run_hostile("transform_plan::inverse + execute", {&Bout}, inverse_cases,
                    [&] { return outcome_of([&] { backward.execute(Bout.as<double>(), Aread.data()); }); }));
}

TEST(HostileCpp, RelabelTargets) {
  const int me = world_rank(), p = world_size();
  const grid_layout a = block_cyclic(square_params(16, 4, p, 1), me), b = block_cyclic(square_params(16, 4, 1, p), me);
  guarded_buffer permutation(static_cast<std::size_t>(p) * sizeof(int));
  const auto call = [&](bool bad, int which) {
    std::vector<job_description> jobs{{a, b, op::identity, element_type::f64}};
    relabel::relabel_cost cost;
    relabel::solver solver = relabel::solver::exact;
    if (bad && which == 0) jobs[0].region = element_region{region_shape::lower, 0};
    if (bad && which == 2) solver = static_cast<relabel::solver>(42);
    if (bad && which == 3) jobs[0].a = block_cyclic(square_params(15, 4, p, 1), me);
    if (bad && which == 4) jobs[0].a = block_cyclic(square_params(16, 2, p, 1), me);  // valid alone
    if (bad && which == 5) jobs.push_back(jobs[0]);
    if (bad && which == 6) solver = relabel::solver::greedy;  // valid alone: rank 0's would decide for all
    if (bad && which == 7) cost.model = relabel::relabel_cost::kind::latency_bandwidth;
    return outcome_of([&] {
      const std::vector<int> perm = relabel_targets(MPI_COMM_WORLD, jobs, cost, solver).result.new_rank_of;
      std::copy(perm.begin(), perm.end(), permutation.as<int>());
    });
  };
  const std::vector<hostile_case> cases = {
      {"a job with a region", [&](bool bad) { return call(bad, 0); }},
      {"solver not a solver", [&](bool bad) { return call(bad, 2); }},
      {"A's shape", [&](bool bad) { return call(bad, 3); }},
      {"A's block size on one rank", [&](bool bad) { return call(bad, 4); }, invalid_on::one_rank_only},
      {"a job more on one rank", [&](bool bad) { return call(bad, 5); }, invalid_on::one_rank_only},
      {"another solver on one rank", [&](bool bad) { return call(bad, 6); }, invalid_on::one_rank_only},
      {"another cost model on one rank", [&](bool bad) { return call(bad, 7); }, invalid_on::one_rank_only},
  };
  count(run_hostile("relabel_targets", {&permutation}, cases, [&] { return call(false, -1); }));
}

TEST(HostileCpp, ReshapePlanAndExecute) {
  const int me = world_rank(), p = world_size();
  const std::vector<std::int64_t> shape{6, 4, 5};
  const nd_layout b = box_layout(brick_boxes(shape, {1, 1, p}), me);
  const std::vector<double> B(static_cast<std::size_t>(b.local_elements()), me + 0.5);
  const nd_layout a_valid = box_layout(pencil_boxes({4, 6, 5}, 2, {1, p}), me, {1, 0, 2});
  guarded_buffer A(static_cast<std::size_t>(a_valid.local_elements()) * sizeof(double));
  // Plans and executes A = permute(B, {1, 0, 2}) with the job and options `change` leaves.
  const auto call_with = [&](const std::function<void(reshape_job&, transform_options&)>& change) {
    return [&, change](bool bad) {
      reshape_job job{a_valid, b, {1, 0, 2}, false, element_type::f64, {}};
      transform_options options;
      if (bad) change(job, options);
      return outcome_of([&] { make_reshape_plan(MPI_COMM_WORLD, {job}, options).execute(A.as<double>(), B.data()); });
    };
  };
  using J = reshape_job;
  using T = transform_options;
  const std::vector<hostile_case> cases = {
      {"axes not a permutation", call_with([](J& j, T&) {
         j.axes = {1, 1, 2};
       })},
      {"axes too short", call_with([](J& j, T&) {
         j.axes = {1, 0};
       })},
      {"axes identity (A is not B's shape then)", call_with([](J& j, T&) { j.axes.clear(); })},
      {"axes {2, 0, 1} on one rank", call_with([](J& j, T&) {
         j.axes = {2, 0, 1};
       }),
       invalid_on::one_rank_only},
      {"A of another dimension", call_with([me](J& j, T&) {
         j.a = box_layout(slab_boxes({4, 30}, 0, 1), me);
       })},
      {"B's boxes cut elsewhere on one rank", call_with([me, p](J& j, T&) {
         j.b = box_layout(pencil_boxes({6, 4, 5}, 2, {p, 1}), me);
       }),
       invalid_on::one_rank_only},
      {"B's strides alias", call_with([&](J& j, T&) {
         j.b = nd_layout({b.splits(0), b.splits(1), b.splits(2)}, {b.procs(0), b.procs(1), b.procs(2)}, b.grid_shape(),
                         b.grid_ranks(), b.packing_order(), storage_kind::regular,
                         {b.local_start(0), b.local_start(1), b.local_start(2)}, {1, 1, 1}, {}, me);
       })},
      {"A's owner outside the communicator", call_with([&](J& j, T&) {
         std::vector<int> ranks = a_valid.grid_ranks();
         ranks.back() = p;
         j.a = nd_layout({a_valid.splits(0), a_valid.splits(1), a_valid.splits(2)},
                         {a_valid.procs(0), a_valid.procs(1), a_valid.procs(2)}, a_valid.grid_shape(), ranks,
                         a_valid.packing_order(), storage_kind::regular,
                         {a_valid.local_start(0), a_valid.local_start(1), a_valid.local_start(2)},
                         a_valid.local_strides(), {}, me);
       })},
      {"element type not a type", call_with([](J& j, T&) { j.type = static_cast<element_type>(77); })},
      {"element type c64 (execute passes double)", call_with([](J& j, T&) { j.type = element_type::c64; })},
      {"region upper for d = 3", call_with([](J& j, T&) {
         j.region = {region_shape::upper, 0};
       })},
      {"options.strategy torus_routed (matrix jobs only)",
       call_with([](J&, T& o) { o.strategy = exchange_strategy::torus_routed; })},
      {"options.strategy alltoallv on one rank", call_with([](J&, T& o) { o.strategy = exchange_strategy::alltoallv; }),
       invalid_on::one_rank_only},
  };
  const auto valid = call_with([](J&, T&) {});
  count(run_hostile("make_reshape_plan + execute", {&A}, cases, [&] { return valid(false); }));
}

TEST(HostileCpp, NodeBuffer) {
  guarded_buffer seen(sizeof(std::int64_t));
  const auto call = [&](bool bad, std::int64_t bytes) {
    return outcome_of([&] {
      node_buffer b(MPI_COMM_WORLD, bad ? bytes : 64);
      *seen.as<std::int64_t>() = b.bytes();
    });
  };
  const std::vector<hostile_case> cases = {
      {"bytes < 0", [&](bool bad) { return call(bad, -1); }},
      {"bytes past what the machine has", [&](bool bad) { return call(bad, std::int64_t{1} << 62); }},
  };
  count(run_hostile("node_buffer", {&seen}, cases, [&] { return call(false, 0); }));
}

// ---- C++: distributed GEMM ----

TEST(HostileCpp, Gemm) {
  const int me = world_rank(), p = world_size();
  // Every rank holds part of each matrix (4 block rows or columns, at most 4 ranks): a null C is wrong wherever
  // it is passed, whichever rank the seed picks.
  const block_cyclic_params qa = square_params(8, 2, p, 1), qb = square_params(8, 2, 1, p),
                            qc = square_params(8, 2, p, 1);
  const grid_layout a = block_cyclic(qa, me), b = block_cyclic(qb, me), c = block_cyclic(qc, me);
  const std::vector<double> A = filled(a, me), B = filled(b, me + 5.0);
  guarded_buffer C(local_bytes(c));
  using D = gemm_description;
  using O = gemm_options;
  const auto call_with = [&](const std::function<void(D&, O&)>& change) {
    return [&, change](bool bad) {
      D d{a, b, c, op::identity, op::identity, element_type::f64};
      O o;
      if (bad) change(d, o);
      return outcome_of(
          [&] { make_gemm_plan(MPI_COMM_WORLD, d, o).execute(C.as<double>(), A.data(), B.data(), 1.0, 0.0); });
    };
  };
  const std::vector<hostile_case> cases = {
      {"C's shape", call_with([&](D& d, O&) { d.c = block_cyclic(square_params(9, 2, p, 1), me); })},
      {"op(A) transposed (A is square: B's k differs)", call_with([&](D& d, O&) {
         block_cyclic_params q = qb;
         q.m = 7;
         d.b = block_cyclic(q, me);
       })},
      {"op_a not an op", call_with([](D& d, O&) { d.op_a = static_cast<op>(8); })},
      {"integer element type", call_with([](D& d, O&) { d.type = element_type::i32; })},
      {"memory_limit_bytes < 0", call_with([](D&, O& o) { o.memory_limit_bytes = -5; })},
      {"memory_limit_bytes too small for any schedule", call_with([](D&, O& o) { o.memory_limit_bytes = 8; })},
      {"rounds < 0", call_with([](D&, O& o) { o.rounds = -1; })},
      {"max_idle_fraction > 1", call_with([](D&, O& o) { o.max_idle_fraction = 2.0; })},
      {"communication not a choice", call_with([](D&, O& o) { o.communication = static_cast<gemm_communication>(4); })},
      {"communication one_sided on one rank",
       call_with([](D&, O& o) { o.communication = gemm_communication::one_sided; }), invalid_on::one_rank_only},
      {"C's block size on one rank", call_with([&](D& d, O&) {
         block_cyclic_params q = qc;
         q.mb = 3;
         d.c = block_cyclic(q, me);
       }),
       invalid_on::one_rank_only},
      {"C null",
       [&](bool bad) {
         return outcome_of([&] {
           make_gemm_plan(MPI_COMM_WORLD, D{a, b, c, op::identity, op::identity, element_type::f64})
               .execute(bad ? nullptr : C.as<double>(), A.data(), B.data(), 1.0, 0.0);
         });
       }},
  };
  count(run_hostile("make_gemm_plan + execute", {&C}, cases, [&] { return call_with([](D&, O&) {})(false); }));
}

// ---- C++: persistent neighborhood exchange ----

namespace {

// A ring with 3 doubles each way; ids by global position for dedup.
struct ring_exchange {
  int next = 0, previous = 0;
  std::vector<int> counts{3}, displs{0};
  std::vector<double> send;
  std::vector<std::int64_t> send_ids, recv_ids;
  ring_exchange() {
    const int p = world_size(), me = world_rank();
    next = (me + 1) % p;
    previous = (me + p - 1) % p;
    send = {me + 0.25, me + 0.5, me + 0.75};
    send_ids = {3 * me, 3 * me + 1, 3 * me + 2};
    recv_ids = {3 * previous, 3 * previous + 1, 3 * previous + 2};
  }
};

}  // namespace

TEST(HostileCpp, NeighborExchange) {
  ring_exchange r;
  const int p = world_size();
  guarded_buffer recv(3 * sizeof(double));
  // Mutations of one rank's arguments; the exchange runs start/wait when init succeeds.
  struct arguments {
    std::vector<int> sources, destinations, sendcounts, sdispls, recvcounts, rdispls;
    const void* sendbuf;
    void* recvbuf;
    MPI_Datatype sendtype = MPI_DOUBLE, recvtype = MPI_DOUBLE;
    bool ids = true;
    exchange::exchange_options options;
  };
  const auto call_with = [&](const std::function<void(arguments&)>& change) {
    return [&, change](bool bad) {
      arguments x{{r.previous}, {r.next}, r.counts, r.displs, r.counts, r.displs, r.send.data(), recv.as<double>()};
      x.options.strategy = exchange::neighbor_strategy::standard;
      if (bad) change(x);
      return outcome_of([&] {
        exchange::neighbor_buffers buffers{x.sendbuf, x.sendcounts.data(), x.sdispls.data(), x.sendtype,
                                           x.recvbuf, x.recvcounts.data(), x.rdispls.data(), x.recvtype};
        if (x.ids) buffers = exchange::with_global_ids(buffers, r.send_ids, r.recv_ids);
        exchange::neighbor_plan plan =
            exchange::neighbor_alltoallv_init(x.sources, x.destinations, buffers, MPI_COMM_WORLD, x.options);
        plan.start();
        plan.wait();
      });
    };
  };
  using A = arguments;
  std::vector<hostile_case> cases = {
      {"sendcounts[0] < 0", call_with([](A& x) { x.sendcounts[0] = -1; })},
      {"rdispls[0] < 0", call_with([](A& x) { x.rdispls[0] = -4; })},
      {"recvcounts[0] not what the source sends", call_with([](A& x) { x.recvcounts[0] = 2; })},
      {"destination outside the communicator", call_with([p](A& x) { x.destinations[0] = p; })},
      {"source -1", call_with([](A& x) { x.sources[0] = -1; })},
      {"sendbuf null", call_with([](A& x) { x.sendbuf = nullptr; })},
      {"recvbuf null", call_with([](A& x) { x.recvbuf = nullptr; })},
      {"sendtype MPI_DATATYPE_NULL", call_with([](A& x) { x.sendtype = MPI_DATATYPE_NULL; })},
      {"recvtype of another size", call_with([](A& x) { x.recvtype = MPI_FLOAT; })},
      {"strategy not a strategy",
       call_with([](A& x) { x.options.strategy = static_cast<exchange::neighbor_strategy>(11); })},
      {"strategy dedup without global ids", call_with([](A& x) {
         x.ids = false;
         x.options.strategy = exchange::neighbor_strategy::dedup;
       })},
      {"region_size < 0", call_with([](A& x) { x.options.region_size = -3; })},
      {"cost model with a negative latency", call_with([](A& x) {
         exchange::cost_model m;
         m.inter_latency = -1;
         x.options.model = m;
       })},
      {"strategy aggregate on one rank",
       call_with([](A& x) { x.options.strategy = exchange::neighbor_strategy::aggregate; }), invalid_on::one_rank_only},
      {"region_size on one rank", call_with([](A& x) { x.options.region_size = 1; }), invalid_on::one_rank_only},
  };
  if (p > 1)  // with one rank the ring is a self-loop: an extra edge has no partner either way
    cases.push_back({"an extra destination", call_with([](A& x) {
                       x.destinations.push_back(x.destinations[0]);
                       x.sendcounts.push_back(1);
                       x.sdispls.push_back(0);
                     })});
  count(
      run_hostile("neighbor_alltoallv_init + start/wait", {&recv}, cases, [&] { return call_with([](A&) {})(false); }));
}

// ---- C++: in-place all-to-all ----

TEST(HostileCpp, InplaceAlltoallv) {
  const int me = world_rank(), p = world_size();
  const std::int64_t capacity = 4 * p + 8;
  guarded_buffer buf(static_cast<std::size_t>(capacity) * sizeof(double));
  struct arguments {
    std::vector<std::int64_t> sendcounts, recvcounts;
    std::int64_t capacity;
    bool null_buf = false, null_counts = false, pass_recvcounts = true;
    MPI_Datatype type = MPI_DOUBLE;
    exchange::inplace_options options;
  };
  const auto call_with = [&](const std::function<void(arguments&)>& change) {
    return [&, change](bool bad) {
      arguments x{std::vector<std::int64_t>(static_cast<std::size_t>(p), 2),
                  std::vector<std::int64_t>(static_cast<std::size_t>(p), 2), capacity};
      x.options.work_bytes = 64 << 10;
      if (bad) change(x);
      return outcome_of([&] {
        exchange::alltoallv_inplace(
            x.null_buf ? nullptr : buf.as<double>(), x.capacity, x.null_counts ? nullptr : x.sendcounts.data(),
            x.pass_recvcounts ? x.recvcounts.data() : nullptr, x.type, MPI_COMM_WORLD, x.options);
      });
    };
  };
  using A = arguments;
  MPI_Datatype gap = MPI_DATATYPE_NULL;  // lower bound 8: refused (data must start at the extent's start)
  MPI_Type_create_resized(MPI_DOUBLE, 8, 16, &gap);
  MPI_Type_commit(&gap);
  const std::vector<hostile_case> cases = {
      {"sendcounts[last] < 0", call_with([](A& x) { x.sendcounts.back() = -1; })},
      {"sendcounts null", call_with([](A& x) { x.null_counts = true; })},
      {"recvcounts not what the senders send", call_with([](A& x) { x.recvcounts[0] = 3; })},
      {"capacity below the data", call_with([](A& x) { x.capacity = 1; })},
      {"buf null", call_with([](A& x) { x.null_buf = true; })},
      {"type MPI_DATATYPE_NULL", call_with([](A& x) { x.type = MPI_DATATYPE_NULL; })},
      {"type with a lower bound", call_with([gap](A& x) { x.type = gap; })},
      {"algorithm not an algorithm",
       call_with([](A& x) { x.options.algorithm = static_cast<exchange::inplace_algorithm>(12); })},
      {"work_bytes below 64 KiB", call_with([](A& x) { x.options.work_bytes = 100; })},
      {"pairwise_guard NaN", call_with([](A& x) { x.options.pairwise_guard = std::nan(""); })},
      {"algorithm pairwise on one rank",
       call_with([](A& x) { x.options.algorithm = exchange::inplace_algorithm::pairwise; }), invalid_on::one_rank_only},
      {"work_bytes on one rank", call_with([](A& x) { x.options.work_bytes = 128 << 10; }), invalid_on::one_rank_only},
  };
  count(run_hostile("alltoallv_inplace", {&buf}, cases, [&] { return call_with([](A&) {})(false); }));
  MPI_Type_free(&gap);
}

TEST(HostileCpp, InplaceSymmetric) {
  const int me = world_rank(), p = world_size();
  guarded_buffer buf(static_cast<std::size_t>(2 * p) * sizeof(double));
  const auto call_with = [&](const std::function<void(std::vector<int>&, std::vector<int>&, std::int64_t&)>& change) {
    return [&, change](bool bad) {
      std::vector<int> counts(static_cast<std::size_t>(p), 2), displs(static_cast<std::size_t>(p));
      for (int j = 0; j < p; ++j) displs[static_cast<std::size_t>(j)] = 2 * j;
      std::int64_t work = 64 << 10;
      if (bad) change(counts, displs, work);
      return outcome_of([&] {
        exchange::alltoallv_inplace_symmetric(buf.as<double>(), counts.data(), displs.data(), MPI_DOUBLE,
                                              MPI_COMM_WORLD, work);
      });
    };
  };
  using V = std::vector<int>;
  std::vector<hostile_case> cases = {
      {"counts[0] < 0", call_with([](V& c, V&, std::int64_t&) { c[0] = -2; })},
      {"displs[last] < 0", call_with([](V&, V& d, std::int64_t&) { d.back() = -1; })},
      {"work_bytes 0", call_with([](V&, V&, std::int64_t& w) { w = 0; })},
  };
  if (p > 1) {
    cases.push_back({"areas overlapping", call_with([](V&, V& d, std::int64_t&) { d[1] = d[0] + 1; })});
    cases.push_back({"counts not symmetric", call_with([me](V& c, V&, std::int64_t&) { c[me == 0 ? 1 : 0] = 1; }),
                     invalid_on::one_rank_only});
  }
  (void)me;
  count(run_hostile("alltoallv_inplace_symmetric", {&buf}, cases,
                    [&] { return call_with([](V&, V&, std::int64_t&) {})(false); }));
}

// ---- C++: torus-routed permutation ----

TEST(HostileCpp, TorusRoutedPermutation) {
  const int me = world_rank(), p = world_size();
  const torus::topology ring = torus::topology::parse(std::to_string(p));
  const torus::machine machine{ring, torus::rank_mapping::dimension_ordered(ring, "X")};
  const std::int64_t bytes = 5000;
  std::vector<unsigned char> send(static_cast<std::size_t>(bytes), static_cast<unsigned char>(me));
  guarded_buffer recv(static_cast<std::size_t>(bytes));
  const auto call_with =
      [&](const std::function<void(int&, std::int64_t&, torus::routing_options&, torus::machine&)>& change) {
        return [&, change](bool bad) {
          int destination = (me + 1) % p;
          std::int64_t send_bytes = bytes;
          torus::routing_options options;
          torus::machine m = machine;
          if (bad) change(destination, send_bytes, options, m);
          return outcome_of([&] {
            torus::make_routed_permutation_plan(MPI_COMM_WORLD, m, destination, send_bytes, options)
                .execute(recv.as<unsigned char>(), send.data());
          });
        };
      };
  using R = torus::routing_options;
  using M = torus::machine;
  std::vector<hostile_case> cases = {
      {"destination outside the communicator", call_with([p](int& d, std::int64_t&, R&, M&) { d = p + 1; })},
      {"send_bytes < 0", call_with([](int&, std::int64_t& b, R&, M&) { b = -1; })},
      {"options.alpha > 1", call_with([](int&, std::int64_t&, R& o, M&) { o.alpha = 1.5; })},
      {"options.beta 0", call_with([](int&, std::int64_t&, R& o, M&) { o.beta = 0; })},
      {"machine with a node per rank too many", call_with([](int&, std::int64_t&, R&, M& m) {
         const torus::topology bigger = torus::topology::parse(std::to_string(m.network.nodes() + 1));
         m = M{bigger, torus::rank_mapping::dimension_ordered(bigger, "X")};
       })},
      {"options.mode direct on one rank",
       call_with([](int&, std::int64_t&, R& o, M&) { o.mode = torus::routing_mode::direct; }),
       invalid_on::one_rank_only},
  };
  if (p > 1)
    cases.push_back({"two ranks sending to one", call_with([me](int& d, std::int64_t&, R&, M&) { d = me; }),
                     invalid_on::one_rank_only});
  count(run_hostile("make_routed_permutation_plan + execute", {&recv}, cases,
                    [&] { return call_with([](int&, std::int64_t&, R&, M&) {})(false); }));
}

// ---- C ----

namespace {

MPI_Info info_with(const char* key, const char* value) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, key, value);
  return info;
}

}  // namespace

TEST(HostileC, NeighborAlltoallvInit) {
  ring_exchange r;
  const int p = world_size();
  guarded_buffer recv(3 * sizeof(double));
  struct arguments {
    int indegree = 1, outdegree = 1;
    std::vector<int> sources, destinations, sendcounts, sdispls, recvcounts, rdispls;
    const void* sendbuf;
    void* recvbuf;
    MPI_Datatype type = MPI_DOUBLE;
    const char* key = nullptr;
    const char* value = nullptr;
    bool null_request = false, null_sources = false, null_counts = false;
  };
  const auto call_with = [&](const std::function<void(arguments&)>& change) {
    return [&, change](bool bad) {
      arguments x{1,        1,        {r.previous}, {r.next},      r.counts,
                  r.displs, r.counts, r.displs,     r.send.data(), recv.as<double>()};
      if (bad) change(x);
      MPI_Info info = x.key ? info_with(x.key, x.value) : MPI_INFO_NULL;
      redist_request request = REDIST_REQUEST_NULL;
      int code = redist_neighbor_alltoallv_init_lists(
          x.indegree, x.null_sources ? nullptr : x.sources.data(), x.outdegree, x.destinations.data(), x.sendbuf,
          x.null_counts ? nullptr : x.sendcounts.data(), x.sdispls.data(), x.type, x.recvbuf, x.recvcounts.data(),
          x.rdispls.data(), x.type, MPI_COMM_WORLD, info, x.null_request ? nullptr : &request);
      if (info != MPI_INFO_NULL) MPI_Info_free(&info);
      if (code == MPI_SUCCESS) code = redist_start(&request);
      if (code == MPI_SUCCESS) code = redist_wait(&request);
      if (request != REDIST_REQUEST_NULL) redist_request_free(&request);
      return code_outcome(code);
    };
  };
  using A = arguments;
  std::vector<hostile_case> cases = {
      {"indegree < 0", call_with([](A& x) { x.indegree = -1; })},
      {"sources null", call_with([](A& x) { x.null_sources = true; })},
      {"destinations[0] outside comm", call_with([p](A& x) { x.destinations[0] = p + 2; })},
      {"sendcounts null", call_with([](A& x) { x.null_counts = true; })},
      {"sendcounts[0] < 0", call_with([](A& x) { x.sendcounts[0] = -7; })},
      {"sdispls[0] < 0", call_with([](A& x) { x.sdispls[0] = -1; })},
      {"recvcounts[0] not what the source sends", call_with([](A& x) { x.recvcounts[0] = 4; })},
      {"sendbuf null", call_with([](A& x) { x.sendbuf = nullptr; })},
      {"recvbuf null", call_with([](A& x) { x.recvbuf = nullptr; })},
      {"datatype MPI_DATATYPE_NULL", call_with([](A& x) { x.type = MPI_DATATYPE_NULL; })},
      {"request null", call_with([](A& x) { x.null_request = true; })},
      {"redist_strategy unknown", call_with([](A& x) { x.key = "redist_strategy", x.value = "fastest"; })},
      {"redist_strategy dedup without ids", call_with([](A& x) { x.key = "redist_strategy", x.value = "dedup"; })},
      {"redist_region_size 0", call_with([](A& x) { x.key = "redist_region_size", x.value = "0"; })},
      {"redist_region_size not a number", call_with([](A& x) { x.key = "redist_region_size", x.value = "two"; })},
      {"redist_cost_model with 3 numbers", call_with([](A& x) { x.key = "redist_cost_model", x.value = "1,2,3"; })},
      {"redist_strategy aggregate on one rank",
       call_with([](A& x) { x.key = "redist_strategy", x.value = "aggregate"; }), invalid_on::one_rank_only},
      {"datatype float on one rank (sizes disagree)", call_with([](A& x) { x.type = MPI_FLOAT; }),
       invalid_on::one_rank_only},
  };
  count(run_hostile("redist_neighbor_alltoallv_init_lists + start/wait", {&recv}, cases,
                    [&] { return call_with([](A&) {})(false); }));
}

TEST(HostileC, NeighborAlltoallvInitGraphAndExt) {
  ring_exchange r;
  guarded_buffer recv(3 * sizeof(double));
  MPI_Comm graph = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &r.previous, MPI_UNWEIGHTED, 1, &r.next, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &graph);
  // which: 0 = plain init on a graph communicator, 1 = the _ext entry point with ids.
  const auto call = [&](bool bad, int which, int mutation) {
    std::vector<std::int64_t> send_ids = r.send_ids, recv_ids = r.recv_ids;
    MPI_Comm comm = graph;
    int count = 3;
    if (bad && mutation == 0) comm = MPI_COMM_WORLD;  // not a graph communicator
    if (bad && mutation == 1) recv_ids[1] = -99;      // not the id the plain exchange delivers there
    if (bad && mutation == 2) count = -3;
    const int zero = 0;
    redist_request request = REDIST_REQUEST_NULL;
    MPI_Info info = which == 1 ? info_with("redist_strategy", "dedup") : MPI_INFO_NULL;
    int code = which == 0 ? redist_neighbor_alltoallv_init(r.send.data(), &count, &zero, MPI_DOUBLE, recv.as<double>(),
                                                           &count, &zero, MPI_DOUBLE, comm, info, &request)
                          : redist_neighbor_alltoallv_init_ext(r.send.data(), &count, &zero, send_ids.data(),
                                                               MPI_DOUBLE, recv.as<double>(), &count, &zero,
                                                               recv_ids.data(), MPI_DOUBLE, comm, info, &request);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    if (code == MPI_SUCCESS) code = redist_start(&request);
    if (code == MPI_SUCCESS) code = redist_wait(&request);
    if (request != REDIST_REQUEST_NULL) redist_request_free(&request);
    return code_outcome(code);
  };
  count(run_hostile(
      "redist_neighbor_alltoallv_init + start/wait", {&recv},
      {{"comm not a graph communicator", [&](bool bad) { return call(bad, 0, 0); }, invalid_on::every_rank_only},
       {"count < 0", [&](bool bad) { return call(bad, 0, 2); }}},
      [&] { return call(false, 0, -1); }));
  count(run_hostile(
      "redist_neighbor_alltoallv_init_ext + start/wait", {&recv},
      {{"comm not a graph communicator", [&](bool bad) { return call(bad, 1, 0); }, invalid_on::every_rank_only},
       {"a receive id not the one delivered", [&](bool bad) { return call(bad, 1, 1); }},
       {"count < 0", [&](bool bad) { return call(bad, 1, 2); }}},
      [&] { return call(false, 1, -1); }));
  MPI_Comm_free(&graph);
}

TEST(HostileC, RequestHandles) {
  ring_exchange r;
  guarded_buffer recv(3 * sizeof(double));
  redist_request live = REDIST_REQUEST_NULL;
  const int zero = 0, three = 3;
  ASSERT_EQ(redist_neighbor_alltoallv_init_lists(1, &r.previous, 1, &r.next, r.send.data(), &three, &zero, MPI_DOUBLE,
                                                 recv.as<double>(), &three, &zero, MPI_DOUBLE, MPI_COMM_WORLD,
                                                 MPI_INFO_NULL, &live),
            MPI_SUCCESS);
  redist_request freed = REDIST_REQUEST_NULL;
  ASSERT_EQ(redist_neighbor_alltoallv_init_lists(1, &r.previous, 1, &r.next, r.send.data(), &three, &zero, MPI_DOUBLE,
                                                 recv.as<double>(), &three, &zero, MPI_DOUBLE, MPI_COMM_WORLD,
                                                 MPI_INFO_NULL, &freed),
            MPI_SUCCESS);
  const redist_request stale = freed;
  ASSERT_EQ(redist_request_free(&freed), MPI_SUCCESS);
  // Local calls: a bad handle is refused on the rank that passes it (start/wait then run on no rank).
  const auto call = [&](bool bad, int which) {
    redist_request h = bad ? (which == 0   ? stale
                              : which == 1 ? REDIST_REQUEST_NULL
                                           : reinterpret_cast<redist_request>(std::uintptr_t{0x5150}))
                           : live;
    int code = redist_start(&h);
    if (code == MPI_SUCCESS) code = redist_wait(&h);
    return code_outcome(code);
  };
  // A local call: a bad handle on one rank only would leave the others in the exchange (as MPI_Start would).
  std::vector<hostile_case> cases;
  const char* names[] = {"a freed handle", "REDIST_REQUEST_NULL", "a value init never returned"};
  for (int which : {0, 1, 2})
    cases.push_back({names[which], [&, which](bool bad) { return call(bad, which); }, invalid_on::every_rank_only});
  count(run_hostile("redist_start/redist_wait (handles)", {&recv}, cases, [&] { return call(false, -1); }));
  EXPECT_EQ(redist_request_free(&live), MPI_SUCCESS);
}

TEST(HostileC, AlltoallvInplace) {
  const int p = world_size();
  const std::int64_t capacity = 2 * p + 4;
  guarded_buffer buf(static_cast<std::size_t>(capacity) * sizeof(double));
  const auto call_with = [&](const std::function<void(std::vector<std::int64_t>&, std::int64_t&, void*&, MPI_Datatype&,
                                                      redist_inplace_options&)>& change) {
    return [&, change](bool bad) {
      std::vector<std::int64_t> counts(static_cast<std::size_t>(p), 2);
      std::int64_t cap = capacity;
      void* data = buf.as<double>();
      MPI_Datatype type = MPI_DOUBLE;
      redist_inplace_options options{};
      if (bad) change(counts, cap, data, type, options);
      return code_outcome(redist_alltoallv_inplace(data, cap, counts.data(), nullptr, type, MPI_COMM_WORLD, &options));
    };
  };
  using V = std::vector<std::int64_t>;
  using O = redist_inplace_options;
  const std::vector<hostile_case> cases = {
      {"sendcounts[0] < 0", call_with([](V& c, std::int64_t&, void*&, MPI_Datatype&, O&) { c[0] = -1; })},
      {"capacity below the data", call_with([](V&, std::int64_t& cap, void*&, MPI_Datatype&, O&) { cap = 1; })},
      {"buf null", call_with([](V&, std::int64_t&, void*& d, MPI_Datatype&, O&) { d = nullptr; })},
      {"type MPI_DATATYPE_NULL",
       call_with([](V&, std::int64_t&, void*&, MPI_Datatype& t, O&) { t = MPI_DATATYPE_NULL; })},
      {"algorithm not an algorithm", call_with([](V&, std::int64_t&, void*&, MPI_Datatype&, O& o) {
         o.algorithm = static_cast<redist_inplace_algorithm>(9);
       })},
      {"work_bytes past 1 GiB",
       call_with([](V&, std::int64_t&, void*&, MPI_Datatype&, O& o) { o.work_bytes = std::int64_t{1} << 40; })},
      {"pairwise_guard < 0", call_with([](V&, std::int64_t&, void*&, MPI_Datatype&, O& o) { o.pairwise_guard = -1; })},
      {"algorithm bitonic on one rank",
       call_with([](V&, std::int64_t&, void*&, MPI_Datatype&, O& o) { o.algorithm = REDIST_INPLACE_BITONIC; }),
       invalid_on::one_rank_only},
  };
  count(run_hostile("redist_alltoallv_inplace", {&buf}, cases,
                    [&] { return call_with([](V&, std::int64_t&, void*&, MPI_Datatype&, O&) {})(false); }));
}

TEST(HostileC, AlltoallvInPlaceOfMpi) {
  const int p = world_size(), me = world_rank();
  guarded_buffer buf(static_cast<std::size_t>(2 * p) * sizeof(double));
  const auto call = [&](bool bad, int which) {
    std::vector<int> counts(static_cast<std::size_t>(p), 2), displs(static_cast<std::size_t>(p));
    for (int j = 0; j < p; ++j) displs[static_cast<std::size_t>(j)] = 2 * j;
    MPI_Datatype type = MPI_DOUBLE;
    if (bad && which == 0) counts[0] = -1;
    if (bad && which == 1) displs[static_cast<std::size_t>(p - 1)] = -2;
    if (bad && which == 2) type = MPI_DATATYPE_NULL;
    if (bad && which == 3) counts[me == 0 ? static_cast<std::size_t>(p - 1) : 0] = 1;
    return code_outcome(redist_alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, buf.as<double>(),
                                         counts.data(), displs.data(), type, MPI_COMM_WORLD));
  };
  std::vector<hostile_case> cases = {
      {"recvcounts[0] < 0", [&](bool bad) { return call(bad, 0); }},
      {"rdispls[last] < 0", [&](bool bad) { return call(bad, 1); }},
      {"recvtype MPI_DATATYPE_NULL", [&](bool bad) { return call(bad, 2); }},
  };
  if (p > 1)
    cases.push_back({"counts not symmetric", [&](bool bad) { return call(bad, 3); }, invalid_on::one_rank_only});
  count(run_hostile("redist_alltoallv (MPI_IN_PLACE)", {&buf}, cases, [&] { return call(false, -1); }));
}

TEST(HostileC, ReshapePlanCreateAndExecute) {
  const int me = world_rank(), p = world_size();
  // Input: slabs of 6 x 4 x p*2 along axis 2; output: the same space with axes {1, 0, 2}, slabs along axis 0.
  guarded_buffer out(static_cast<std::size_t>(4 * 6 * 2) * sizeof(double));
  std::vector<double> in(6 * 4 * 2, me + 0.25);
  struct args {
    int ndim = 3;
    std::int64_t in_lo[3], in_hi[3], out_lo[3], out_hi[3];
    std::vector<int> in_order{2, 1, 0}, out_order{2, 1, 0}, axes{1, 0, 2};
    const std::int64_t* in_lo_ptr = in_lo;
    MPI_Datatype type = MPI_DOUBLE;
    std::string strategy, relabel;
    void* out = nullptr;
  };
  const auto call_with = [&](const std::function<void(args&)>& change) {
    return [&, change](bool bad) {
      args a;
      const std::int64_t in_lo[3] = {0, 0, 2 * me}, in_hi[3] = {6, 4, 2 * me + 2};
      const std::int64_t out_lo[3] = {0, 0, 2 * me}, out_hi[3] = {4, 6, 2 * me + 2};
      std::copy(in_lo, in_lo + 3, a.in_lo);
      std::copy(in_hi, in_hi + 3, a.in_hi);
      std::copy(out_lo, out_lo + 3, a.out_lo);
      std::copy(out_hi, out_hi + 3, a.out_hi);
      a.out = out.as<double>();
      if (bad) change(a);
      MPI_Info info = MPI_INFO_NULL;
      if (!a.strategy.empty() || !a.relabel.empty()) {
        MPI_Info_create(&info);
        if (!a.strategy.empty()) MPI_Info_set(info, "redist_strategy", a.strategy.c_str());
        if (!a.relabel.empty()) MPI_Info_set(info, "redist_relabel", a.relabel.c_str());
      }
      redist_reshape_plan plan = REDIST_RESHAPE_PLAN_NULL;
      int rc = redist_reshape_plan_create(MPI_COMM_WORLD, a.ndim, a.in_lo_ptr, a.in_hi, a.in_order.data(), a.out_lo,
                                          a.out_hi, a.out_order.data(), a.axes.data(), a.type, info, &plan);
      if (info != MPI_INFO_NULL) MPI_Info_free(&info);
      if (rc == MPI_SUCCESS) rc = redist_reshape_plan_execute(plan, a.out, in.data(), nullptr, nullptr);
      // A refused execute is local to its rank: the others' codes must say so too for the outcome to agree.
      int worst = rc;
      MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      redist_reshape_plan_free(&plan);
      return code_outcome(worst);
    };
  };
  const std::vector<hostile_case> cases = {
      {"ndim 0", call_with([](args& a) { a.ndim = 0; })},
      {"ndim 9", call_with([](args& a) { a.ndim = 9; })},
      {"in_lo null", call_with([](args& a) { a.in_lo_ptr = nullptr; })},
      {"in_lo > in_hi", call_with([](args& a) { a.in_lo[0] = 7; })},
      {"input boxes overlap", call_with([](args& a) { a.in_hi[2] += 1; })},
      {"output boxes leave a gap", call_with([](args& a) { a.out_hi[0] = 3; })},
      {"in_order not a permutation", call_with([](args& a) {
         a.in_order = {2, 2, 0};
       })},
      {"out_order not a permutation on one rank", call_with([](args& a) {
         a.out_order = {0, 1, 1};
       }),
       invalid_on::one_rank_only},
      {"axes not a permutation", call_with([](args& a) {
         a.axes = {0, 0, 2};
       })},
      {"axes identity (output space is not the input's permuted)", call_with([](args& a) {
         a.axes = {0, 1, 2};
       })},
      {"type MPI_CHAR", call_with([](args& a) { a.type = MPI_CHAR; })},
      {"info redist_strategy unknown", call_with([](args& a) { a.strategy = "fastest"; })},
      {"info redist_relabel unknown", call_with([](args& a) { a.relabel = "sometimes"; })},
      {"info redist_strategy alltoallv on one rank", call_with([](args& a) { a.strategy = "alltoallv"; }),
       invalid_on::one_rank_only},
      {"out null (execute)", call_with([](args& a) { a.out = nullptr; })},
  };
  count(run_hostile("redist_reshape_plan_create + execute", {&out}, cases,
                    [&] { return call_with([](args&) {})(false); }));
}

TEST(HostileSummary, CasesCounted) {
  if (world_rank() == 0) std::printf("[hostile] total: %d cases\n", total_cases);
  EXPECT_GT(total_cases, 0);
}
