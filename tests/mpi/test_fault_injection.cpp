// SPDX-License-Identifier: BSD-3-Clause
// Fault injection (built with -DREDIST_FAULT_INJECTION=ON): for a representative call of every entry point,
// every injection point the call reaches on any rank is made to fail, one at a time, on that rank only.
// Each time every rank must throw the same error (nothing hangs: an alarm ends the program), the outputs
// must be untouched, and the next call without a fault must succeed with the same result as before.
// redist-test-ranks: 2 3
// redist-test-nodes: 4:2
// redist-test-labels: fast
// redist-test-needs: fault_injection scalapack
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpi/fault_injection.hpp"
#include "mpi_test_support.hpp"
#include "random_layouts.hpp"
#include "redist/exchange/inplace.hpp"
#include "redist/redist.h"
#include "redist/redist.hpp"
#include "redist/torus/exchange.hpp"
#include "scalapack_cases.hpp"

extern "C" {
// Replaces ScaLAPACK's PXERBLA for this program (redist finds it at run time): the ScaLAPACK twins' failures
// after their argument checks arrive here (REDIST_SCALAPACK_ON_ERROR=return) and are thrown on by the cases.
int reported_info = 0;
void pxerbla_(const int*, const char*, const int* info, std::size_t) { reported_info = *info; }
}

using namespace redist;
using namespace redist::testing;

namespace {

// A call of one entry point: reset() restores inputs and fills outputs with a sentinel, call() runs the
// collective call(s), output() is what the call writes.
struct fault_case {
  std::string name;
  std::function<void()> reset;
  std::function<void()> call;
  std::function<std::vector<double>()> output;
  // The ScaLAPACK twins report an INFO through PXERBLA, not the message (it goes to stderr).
  bool message_says_injected = true;
  // Faults the call recovers from (a one-sided multiply whose windows cannot be made sends its panels two-sided):
  // then no rank throws and the result is the expected one.
  bool may_recover = false;
};

std::string current_point = "none";
void on_alarm(int) {
  const std::string text =
      "[rank " + std::to_string(world_rank()) + "] no answer within 60 s at " + current_point + "\n";
  if (write(2, text.data(), text.size()) < 0) _exit(3);
  _exit(2);
}

std::uint64_t text_hash(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Runs every injection point of `c`; returns the number of points covered (over all ranks) and, of them, those
// recovered from (c.may_recover).
std::pair<long, long> enumerate(const fault_case& c) {
  const int me = world_rank(), p = world_size();
  std::signal(SIGALRM, on_alarm);
  // A run without fault: the expected output, and how many points each rank reaches.
  c.reset();
  c.call();  // warms caches (private communicators, calibrations) so that the counted run is the steady one
  c.reset();
  fault::arm(0);
  c.call();
  const std::vector<double> expected = c.output();
  std::vector<long> points(static_cast<std::size_t>(p));
  long mine = fault::points();
  MPI_Allgather(&mine, 1, MPI_LONG, points.data(), 1, MPI_LONG, MPI_COMM_WORLD);
  long covered = 0, recovered = 0;
  for (int r = 0; r < p; ++r)
    for (long n = 1; n <= points[static_cast<std::size_t>(r)]; ++n) {
      current_point = c.name + ", rank " + std::to_string(r) + ", point " + std::to_string(n);
      c.reset();
      const std::vector<double> before = c.output();
      fault::arm(me == r ? n : 0);
      alarm(60);
      std::string what;
      bool thrown = false;
      try {
        c.call();
      } catch (const error& e) {
        thrown = true;
        what = e.what();
      }
      alarm(0);
      fault::arm(0);
      if (c.may_recover && all_ranks(!thrown)) {
        EXPECT_TRUE(all_ranks(c.output() == expected)) << current_point << ": recovered with another result";
        ++covered, ++recovered;
        if (::testing::Test::HasFailure()) return {covered, recovered};
        continue;
      }
      EXPECT_TRUE(all_ranks(thrown)) << current_point << ": rank " << me << (thrown ? " threw" : " did not throw");
      // The same message everywhere (that of the failing rank), which says the fault was injected.
      const auto h = static_cast<std::int64_t>(text_hash(what) >> 1);
      EXPECT_EQ(global_max(h), -global_max(-h)) << current_point << ": messages differ; here: " << what;
      if (c.message_says_injected) EXPECT_NE(what.find("injected"), std::string::npos) << current_point << ": " << what;
      EXPECT_TRUE(all_ranks(c.output() == before)) << current_point << ": output written before the error";
      // The next call without a fault succeeds.
      c.reset();
      c.call();
      EXPECT_TRUE(all_ranks(c.output() == expected)) << current_point << ": the next call computed another result";
      ++covered;
      if (::testing::Test::HasFailure()) return {covered, recovered};
    }
  return {covered, recovered};
}

// Returns the points recovered from.
long run(const fault_case& c) {
  const auto [covered, recovered] = enumerate(c);
  if (world_rank() == 0)
    std::printf("[faults] %s: %ld injection points covered, %ld recovered from\n", c.name.c_str(), covered, recovered);
  EXPECT_GT(covered, 0) << c.name << " reached no injection point";
  return recovered;
}

// MPICH's simulated nodes (MPIR_CVAR_NUM_CLIQUES): that run covers the calls whose set-up differs across nodes (node
// communicators, shared windows on some nodes only, the multiply's panels); the others skip there.
bool on_simulated_nodes() {
  const char* cliques = std::getenv("MPIR_CVAR_NUM_CLIQUES");
  return cliques != nullptr && std::atoi(cliques) > 1;
}
#define SKIP_ON_SIMULATED_NODES() \
  if (on_simulated_nodes()) GTEST_SKIP() << "runs on one node (its set-up is the same on several)"

std::vector<double> pattern(std::size_t n, int seed) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = seed * 1000.0 + static_cast<double>(i);
  return v;
}

}  // namespace

TEST(FaultInjection, CompiledIn) {
  ASSERT_TRUE(fault::compiled_in) << "this program needs the library built with -DREDIST_FAULT_INJECTION=ON";
}

TEST(FaultInjection, TransformPlanAndExecute) {
  SKIP_ON_SIMULATED_NODES();
  const int me = world_rank(), p = world_size();
  const grid_layout a = block_cyclic(square_params(12, 2, 1, p), me), b = block_cyclic(square_params(12, 3, p, 1), me);
  std::vector<double> A, B;
  run({"transform",
       [&] {
         A.assign(static_cast<std::size_t>(a.local_elements()), -1.0);
         B = pattern(static_cast<std::size_t>(b.local_elements()), me);
       },
       [&] { make_transform_plan(MPI_COMM_WORLD, a, b, op::transpose, element_type::f64).execute(A.data(), B.data()); },
       [&] { return A; }});
}

// Calls that each plan on a communicator no successful call has seen: after a failure, the next call reuses it.
// What a first call caches on its communicator (host names, node communicators, grid lines, shared windows)
// must be made inside an agreement, and forgotten by every rank when that agreement fails: a rank that kept
// what the failing call cached would skip a collective the others make (and the alarm ends the program).
struct on_fresh_communicators {
  std::unique_ptr<MPI_Comm, void (*)(MPI_Comm*)> comm{nullptr, [](MPI_Comm* c) {
                                                        MPI_Comm_free(c);
                                                        delete c;
                                                      }};
  bool used = true;  // by a successful call: the next reset makes a new one
  void renew() {
    comm.reset(new MPI_Comm(MPI_COMM_NULL));
    MPI_Comm_dup(MPI_COMM_WORLD, comm.get());
    used = false;
  }
  // The case for enumerate(): reset() and call(comm) as a fault_case's, on these communicators.
  fault_case of(std::string name, std::function<void()> reset, std::function<void(MPI_Comm)> call,
                std::function<std::vector<double>()> output) {
    return {std::move(name),
            [this, reset] {
              reset();
              if (used) renew();
            },
            [this, call] {
              call(*comm);
              used = true;
            },
            std::move(output)};
  }
  // Injection points a call on a new communicator reaches on this rank.
  long points_of_first_call(const std::function<void()>& reset, const std::function<void(MPI_Comm)>& call) {
    reset();
    renew();
    fault::arm(0);
    call(*comm);
    used = true;
    return fault::points();
  }
};

// The transform: the first plan on a communicator gathers the ranks' host names (the OpenMP team's size) in
// the arguments' agreement, so its calls reach more injection points than calls on a warm communicator.
TEST(FaultInjection, TransformOnAFreshCommunicator) {
  const int me = world_rank(), p = world_size();
  const grid_layout a = block_cyclic(square_params(12, 2, 1, p), me), b = block_cyclic(square_params(12, 3, p, 1), me);
  std::vector<double> A, B;
  const auto reset = [&] {
    A.assign(static_cast<std::size_t>(a.local_elements()), -1.0);
    B = pattern(static_cast<std::size_t>(b.local_elements()), me);
  };
  const auto call = [&](MPI_Comm comm) {
    make_transform_plan(comm, a, b, op::transpose, element_type::f64).execute(A.data(), B.data());
  };
  reset();
  call(MPI_COMM_WORLD);  // warms MPI_COMM_WORLD
  reset();
  fault::arm(0);
  call(MPI_COMM_WORLD);
  const long warm = global_max(fault::points());
  on_fresh_communicators fresh;
  const long covered = enumerate(fresh.of("transform on fresh communicators", reset, call, [&] { return A; })).first;
  const long cold = global_max(fresh.points_of_first_call(reset, call));
  if (me == 0)
    std::printf("[faults] transform on fresh communicators: %ld points covered; per rank %ld (warm %ld)\n", covered,
                cold, warm);
  EXPECT_GT(cold, warm) << "the first plan on a communicator made its collective set-up outside the agreement";
  // shared_memory: the node's communicator and the window its segments are cut from, cached on the caller's; every
  // collective of the set-up is a step of the plan's set-up agreement (on several nodes, a window that one node
  // could not make fails every rank). alltoallv: its set-up's allreduce.
  for (const exchange_strategy strategy : {exchange_strategy::shared_memory, exchange_strategy::alltoallv}) {
    transform_options options;
    options.strategy = strategy;
    on_fresh_communicators fresh_strategy;
    const auto call_with = [&](MPI_Comm comm) {
      make_transform_plan(comm, a, b, op::transpose, element_type::f64, options).execute(A.data(), B.data());
    };
    run(fresh_strategy.of(std::string("transform ") + to_string(strategy) + " on fresh communicators", reset, call_with,
                          [&] { return A; }));
  }
}

TEST(FaultInjection, Batch) {
  SKIP_ON_SIMULATED_NODES();
  const int me = world_rank(), p = world_size();
  const grid_layout a = block_cyclic(square_params(10, 2, p, 1), me), b = block_cyclic(square_params(10, 4, 1, p), me);
  std::vector<double> A1, A2, B1, B2;
  run({"batch",
       [&] {
         A1.assign(static_cast<std::size_t>(a.local_elements()), -1.0);
         A2 = A1;
         B1 = pattern(static_cast<std::size_t>(b.local_elements()), me);
         B2 = pattern(static_cast<std::size_t>(b.local_elements()), me + 7);
       },
       [&] {
         const transform_plan plan = make_transform_plan(
             MPI_COMM_WORLD, {{a, b, op::identity, element_type::f64}, {a, b, op::transpose, element_type::f64}});
         plan.execute({job_buffers{A1.data(), B1.data(), scalar(1.0), scalar(0.0)},
                       job_buffers{A2.data(), B2.data(), scalar(2.0), scalar(0.0)}});
       },
       [&] {
         std::vector<double> all = A1;
         all.insert(all.end(), A2.begin(), A2.end());
         return all;
       }});
}

TEST(FaultInjection, Inverse) {
  SKIP_ON_SIMULATED_NODES();
  const int me = world_rank(), p = world_size();
  const grid_layout a = block_cyclic(square_params(10, 2, p, 1), me), b = block_cyclic(square_params(10, 4, 1, p), me);
  const transform_plan forward = make_transform_plan(MPI_COMM_WORLD, a, b, op::transpose, element_type::f64);
  std::vector<double> A, back;
  run({"inverse",
       [&] {
         A = pattern(static_cast<std::size_t>(a.local_elements()), me);
         back.assign(static_cast<std::size_t>(b.local_elements()), -1.0);
       },
       [&] { forward.inverse().execute(back.data(), A.data()); }, [&] { return back; }});
}

TEST(FaultInjection, RelabelTargets) {
  SKIP_ON_SIMULATED_NODES();
  const int me = world_rank(), p = world_size();
  const grid_layout a = block_cyclic(square_params(16, 4, p, 1), me), b = block_cyclic(square_params(16, 4, 1, p), me);
  std::vector<int> perm;
  const auto call = [&](MPI_Comm comm) {
    perm = relabel_targets(comm, {{a, b, op::identity, element_type::f64}}).result.new_rank_of;
  };
  const auto output = [&] { return std::vector<double>(perm.begin(), perm.end()); };
  run({"relabel_targets", [&] { perm.clear(); }, [&] { call(MPI_COMM_WORLD); }, output});
  on_fresh_communicators fresh;
  run(fresh.of(
      "relabel_targets on fresh communicators", [&] { perm.clear(); }, call, output));
}

// Two-sided panels, one-sided ones (the windows' creation is agreed on, and a fence that fails on one rank fails
// the multiply on all) and the default, node-shared ones on one node (the shared windows' creation is agreed
// on, and so is the line barrier's failure).
TEST(FaultInjection, Gemm) {
  const int me = world_rank(), p = world_size();
  const grid_layout a = block_cyclic(square_params(8, 2, p, 1), me), b = block_cyclic(square_params(8, 2, 1, p), me),
                    c = block_cyclic(square_params(8, 3, p, 1), me);
  std::vector<double> A, B, C;
  for (const gemm_communication communication :
       {gemm_communication::two_sided, gemm_communication::one_sided, gemm_communication::automatic}) {
    // On simulated nodes only automatic's set-up differs (its node discovery and choice).
    if (on_simulated_nodes() && communication != gemm_communication::automatic) continue;
    gemm_options options;
    options.communication = communication;
    const auto reset = [&] {
      A = pattern(static_cast<std::size_t>(a.local_elements()), me);
      B = pattern(static_cast<std::size_t>(b.local_elements()), me + 3);
      C.assign(static_cast<std::size_t>(c.local_elements()), -1.0);
    };
    const auto call = [&](MPI_Comm comm) {
      gemm(comm, a, A.data(), b, B.data(), c, C.data(), 1.0, 0.0, op::identity, op::identity, options);
    };
    const std::string name = std::string("gemm ") + to_string(communication);
    const bool one_sided = communication == gemm_communication::one_sided;
    fault_case c{name, reset, [&] { call(MPI_COMM_WORLD); }, [&] { return C; }};
    c.may_recover = one_sided;  // a window not made: its panels travel two-sided
    const long recovered = run(c);
    if (one_sided && p > 1) EXPECT_GT(recovered, 0) << "no window's failure was recovered from";
    // A first plan on a communicator splits it into nodes, makes its grid lines and the node's window.
    on_fresh_communicators fresh;
    fault_case f = fresh.of(name + " on fresh communicators", reset, call, [&] { return C; });
    f.may_recover = one_sided;
    run(f);
  }
}

TEST(FaultInjection, NeighborExchangeEveryStrategy) {
  SKIP_ON_SIMULATED_NODES();
  const int me = world_rank(), p = world_size();
  // Each rank sends 3 elements to every rank (itself included), ids by global position.
  std::vector<int> peers(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) peers[static_cast<std::size_t>(r)] = r;
  std::vector<int> counts(static_cast<std::size_t>(p), 3), displs(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) displs[static_cast<std::size_t>(r)] = 3 * r;
  std::vector<std::int64_t> send_ids(static_cast<std::size_t>(3 * p)), recv_ids(static_cast<std::size_t>(3 * p));
  for (int r = 0; r < p; ++r)
    for (int k = 0; k < 3; ++k) {
      send_ids[static_cast<std::size_t>(3 * r + k)] = me * 3 + k;  // every destination gets this rank's 3 ids
      recv_ids[static_cast<std::size_t>(3 * r + k)] = r * 3 + k;
    }
  for (auto strategy : {exchange::neighbor_strategy::standard, exchange::neighbor_strategy::aggregate,
                        exchange::neighbor_strategy::dedup, exchange::neighbor_strategy::automatic}) {
    std::vector<double> send, recv;
    exchange::exchange_options options;
    options.strategy = strategy;
    options.region_size = 2;
    const auto reset = [&] {
      send.assign(static_cast<std::size_t>(3 * p), 0.0);
      for (int r = 0; r < p; ++r)
        for (int k = 0; k < 3; ++k) send[static_cast<std::size_t>(3 * r + k)] = me * 3 + k + 0.25;
      recv.assign(static_cast<std::size_t>(3 * p), -1.0);
    };
    const auto call = [&](MPI_Comm comm) {
      exchange::neighbor_buffers buffers{send.data(), counts.data(), displs.data(), MPI_DOUBLE,
                                         recv.data(), counts.data(), displs.data(), MPI_DOUBLE};
      buffers.global_ids = true;
      buffers.send_ids = send_ids.data();
      buffers.recv_ids = recv_ids.data();
      exchange::neighbor_plan plan = exchange::neighbor_alltoallv_init(peers, peers, buffers, comm, options);
      plan.start();
      plan.wait();
    };
    const std::string name = std::string("neighbor ") + exchange::to_string(strategy);
    run({name, reset, [&] { call(MPI_COMM_WORLD); }, [&] { return recv; }});
    on_fresh_communicators fresh;
    run(fresh.of(name + " on fresh communicators", reset, call, [&] { return recv; }));
  }
}

TEST(FaultInjection, InplaceEveryAlgorithm) {
  SKIP_ON_SIMULATED_NODES();
  const int me = world_rank(), p = world_size();
  for (auto algorithm : {exchange::inplace_algorithm::automatic, exchange::inplace_algorithm::chunked,
                         exchange::inplace_algorithm::pairwise, exchange::inplace_algorithm::bitonic}) {
    // Rank i sends i + j + 1 elements to rank j; capacity holds the larger total.
    std::vector<std::int64_t> counts(static_cast<std::size_t>(p));
    std::int64_t send_total = 0, recv_total = 0;
    for (int j = 0; j < p; ++j) {
      counts[static_cast<std::size_t>(j)] = me + j + 1;
      send_total += me + j + 1;
      recv_total += j + me + 1;
    }
    const std::int64_t capacity = std::max(send_total, recv_total) + 8 * p;
    std::vector<double> buf;
    exchange::inplace_options options;
    options.algorithm = algorithm;
    options.work_bytes = 64 << 10;
    const auto reset = [&] { buf = pattern(static_cast<std::size_t>(capacity), me); };
    const auto call = [&](MPI_Comm comm) {
      exchange::alltoallv_inplace(buf.data(), capacity, counts.data(), nullptr, MPI_DOUBLE, comm, options);
    };
    const std::string name = std::string("inplace ") + std::to_string(static_cast<int>(algorithm));
    run({name, reset, [&] { call(MPI_COMM_WORLD); }, [&] { return buf; }});
    on_fresh_communicators fresh;
    run(fresh.of(name + " on fresh communicators", reset, call, [&] { return buf; }));
  }
  std::vector<int> counts(static_cast<std::size_t>(p), 2), displs(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j) displs[static_cast<std::size_t>(j)] = 2 * j;
  std::vector<double> buf;
  const auto reset = [&] { buf = pattern(static_cast<std::size_t>(2 * p), me); };
  const auto call = [&](MPI_Comm comm) {
    exchange::alltoallv_inplace_symmetric(buf.data(), counts.data(), displs.data(), MPI_DOUBLE, comm, 64 << 10);
  };
  run({"inplace symmetric", reset, [&] { call(MPI_COMM_WORLD); }, [&] { return buf; }});
  on_fresh_communicators fresh;
  run(fresh.of("inplace symmetric on fresh communicators", reset, call, [&] { return buf; }));
}

// The C reshape: create (with relabeling: every agreed step, the registry slot), execute and free; a failing code
// is thrown on with the reason redist_last_error_message() gives.
TEST(FaultInjection, ReshapeC) {
  SKIP_ON_SIMULATED_NODES();
  const int me = world_rank(), p = world_size();
  // A 6 x 4 x p array: input slabs along axis 2, output slabs along axis 0 of the permuted (axes {2, 0, 1}) space.
  const std::int64_t in_lo[3] = {0, 0, me}, in_hi[3] = {6, 4, me + 1};
  const std::int64_t out_lo[3] = {me, 0, 0}, out_hi[3] = {me + 1, 6, 4};
  const int axes[3] = {2, 0, 1};
  std::vector<double> in, out;
  const auto check = [](int code) {
    if (code != MPI_SUCCESS) throw error(redist_last_error_message());
  };
  const auto reset = [&] {
    in = pattern(24, me);
    out.assign(24, -1.0);
  };
  const auto call = [&](MPI_Comm comm) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "redist_relabel", "exact");
    redist_reshape_plan plan = REDIST_RESHAPE_PLAN_NULL;
    const int code = redist_reshape_plan_create(comm, 3, in_lo, in_hi, nullptr, out_lo, out_hi, nullptr, axes,
                                                MPI_DOUBLE, info, &plan);
    MPI_Info_free(&info);
    check(code);
    const int executed = redist_reshape_plan_execute(plan, out.data(), in.data(), nullptr, nullptr);
    check(redist_reshape_plan_free(&plan));
    check(executed);
  };
  run({"redist_reshape", reset, [&] { call(MPI_COMM_WORLD); }, [&] { return out; }});
  on_fresh_communicators fresh;
  run(fresh.of("redist_reshape on fresh communicators", reset, call, [&] { return out; }));
}

TEST(FaultInjection, NodeBuffer) {
  std::vector<double> seen;
  const auto call = [&](MPI_Comm comm) {
    node_buffer b(comm, 4096);
    seen.assign(1, static_cast<double>(b.bytes()));
  };
  run({"node_buffer", [&] { seen.clear(); }, [&] { call(MPI_COMM_WORLD); }, [&] { return seen; }});
  on_fresh_communicators fresh;
  run(fresh.of(
      "node_buffer on fresh communicators", [&] { seen.clear(); }, call, [&] { return seen; }));
}

// The C handle: its registry slot is reserved inside an agreed step before the collective allocation.
TEST(FaultInjection, NodeBufferC) {
  SKIP_ON_SIMULATED_NODES();
  std::vector<double> seen;
  run({"redist_node_buffer", [&] { seen.clear(); },
       [&] {
         redist_node_buffer b = REDIST_NODE_BUFFER_NULL;
         const int code = redist_node_buffer_create(MPI_COMM_WORLD, 4096, &b);
         if (code != MPI_SUCCESS) throw error(redist_last_error_message());
         seen.assign(1, redist_node_buffer_data(b) != nullptr ? 1.0 : 0.0);
         if (redist_node_buffer_free(&b) != MPI_SUCCESS) throw error(redist_last_error_message());
       },
       [&] { return seen; }});
}

TEST(FaultInjection, TorusRouted) {
  SKIP_ON_SIMULATED_NODES();
  const int me = world_rank(), p = world_size();
  const torus::topology ring = torus::topology::parse(std::to_string(p));
  const auto machine =
      std::make_shared<const torus::machine>(torus::machine{ring, torus::rank_mapping::dimension_ordered(ring, "X")});
  torus::routing_options routing;
  routing.mode = torus::routing_mode::sdr;
  routing.alpha = 1.0;
  routing.gamma = 0;
  routing.delta = -1;
  routing.beta = 2;
  // A transpose on one p x 1 grid, the torus_routed strategy of the transform engine.
  const grid_layout a = block_cyclic(square_params(9, 2, p, 1), me), b = block_cyclic(square_params(9, 2, p, 1), me);
  transform_options options;
  options.strategy = exchange_strategy::torus_routed;
  options.torus = machine;
  options.torus_routing = routing;
  std::vector<double> A, B;
  const auto reset = [&] {
    A.assign(static_cast<std::size_t>(a.local_elements()), -1.0);
    B = pattern(static_cast<std::size_t>(b.local_elements()), me);
  };
  const auto call = [&](MPI_Comm comm) {
    make_transform_plan(comm, a, b, op::transpose, element_type::f64, options).execute(A.data(), B.data());
  };
  run({"transform torus_routed", reset, [&] { call(MPI_COMM_WORLD); }, [&] { return A; }});
  on_fresh_communicators fresh;
  run(fresh.of("transform torus_routed on fresh communicators", reset, call, [&] { return A; }));
  // A routed permutation on its own: each rank sends 9000 bytes to the next.
  std::vector<unsigned char> send(9000), recv;
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<unsigned char>(me * 7 + i);
  run({"routed permutation", [&] { recv.assign(send.size(), 0); },
       [&] {
         torus::make_routed_permutation_plan(MPI_COMM_WORLD, *machine, (me + 1) % p, 9000, routing)
             .execute(recv.data(), send.data());
       },
       [&] { return std::vector<double>(recv.begin(), recv.end()); }});
}

TEST(FaultInjection, ScalapackTwins) {
  SKIP_ON_SIMULATED_NODES();
  setenv("REDIST_SCALAPACK_ON_ERROR", "return", 1);
  const int p = world_size();
  std::vector<int> all(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) all[static_cast<std::size_t>(r)] = r;
  matrix_case ca, cc;
  ca.M = ca.N = cc.M = cc.N = 10;
  ca.mb = ca.nb = ca.imb = ca.inb = 3;
  cc.mb = cc.nb = cc.imb = cc.inb = 2;
  // The local arrays, from grids of the same shapes as every call's own.
  std::vector<double> a_rows, a_cols, b;
  {
    blacs_context rows(p, 1, all), cols(1, p, all);
    a_rows = make_local<double>(ca, rows, make_descriptor(ca, rows), 0);
    a_cols = make_local<double>(ca, cols, make_descriptor(ca, cols), 0);
    b = make_local<double>(cc, cols, make_descriptor(cc, cols), 1);
  }
  std::vector<double> c;
  const int n = 10, one = 1;
  const double alpha = 1.5, beta = 0.0;
  const auto reset = [&] {
    blacs_context cols(1, p, all);
    c = make_local<double>(cc, cols, make_descriptor(cc, cols), 1);
  };
  // Each call on new BLACS contexts: the drop-in plans (and so reaches its injection points) on a context's
  // first call and reuses the plan from its cache afterwards.
  const auto on_new_grids = [&](const auto& call) {
    return [&, call] {
      blacs_context rows(p, 1, all), cols(1, p, all);
      const std::vector<int> desca_rows = make_descriptor(ca, rows), desca_cols = make_descriptor(ca, cols);
      const std::vector<int> descb = make_descriptor(cc, cols), descc = make_descriptor(cc, cols);
      reported_info = 0;
      call(cols.context, desca_rows.data(), desca_cols.data(), descb.data(), descc.data());
      if (reported_info != 0) throw error("PXERBLA reported " + std::to_string(reported_info));
    };
  };
  run({"redist_pdgemr2d", reset,
       on_new_grids([&](int context, const int* desca, const int*, const int*, const int* descc) {
         redist_pdgemr2d(&n, &n, a_rows.data(), &one, &one, desca, c.data(), &one, &one, descc, &context);
       }),
       [&] { return c; }, false});
  run({"redist_pdtrmr2d", reset,
       on_new_grids([&](int context, const int* desca, const int*, const int*, const int* descc) {
         redist_pdtrmr2d("L", "N", &n, &n, a_rows.data(), &one, &one, desca, c.data(), &one, &one, descc, &context);
       }),
       [&] { return c; }, false});
  // PBLAS routines: every operand on C's context.
  run({"redist_pdtran", reset, on_new_grids([&](int, const int*, const int* desca, const int*, const int* descc) {
         redist_pdtran(&n, &n, &alpha, a_cols.data(), &one, &one, desca, &beta, c.data(), &one, &one, descc);
       }),
       [&] { return c; }, false});
  run({"redist_pdgemm", reset, on_new_grids([&](int, const int*, const int* desca, const int* descb, const int* descc) {
         redist_pdgemm("N", "T", &n, &n, &n, &alpha, a_cols.data(), &one, &one, desca, b.data(), &one, &one, descb,
                       &beta, c.data(), &one, &one, descc);
       }),
       [&] { return c; }, false});
  unsetenv("REDIST_SCALAPACK_ON_ERROR");
}
