// SPDX-License-Identifier: BSD-3-Clause
#include "call_summary.hpp"

#include <cstdarg>
#include <cstdio>

#include "redist/scalapack/descriptor.hpp"

namespace redist::scalapack {
namespace {

// Appends to a fixed buffer, cutting where it is full.
struct appender {
  char* out;
  std::size_t size, used = 0;
  void operator()(const char* format, ...) noexcept __attribute__((format(printf, 2, 3))) {
    if (used + 1 >= size) return;
    va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(out + used, size - used, format, args);
    va_end(args);
    if (n > 0) used = used + static_cast<std::size_t>(n) < size ? used + static_cast<std::size_t>(n) : size - 1;
  }
};

void describe_operand(appender& say, const call_summary::operand& o) noexcept {
  const int* d = o.desc;
  if (d == nullptr) {
    say("%c(%d,%d): no descriptor", o.name, o.i, o.j);
    return;
  }
  // DTYPE 1: [1, CTXT, M, N, MB, NB, RSRC, CSRC, LLD]; DTYPE 2 has IMB and INB before MB and NB.
  const int shift = d[0] == block_cyclic_2d_inb ? 2 : 0;
  if ((d[0] != block_cyclic_2d && d[0] != block_cyclic_2d_inb) || d[1] < 0) {
    say("%c(%d,%d): descriptor type %d, context %d", o.name, o.i, o.j, d[0], d[1]);
    return;
  }
  say("%c(%d,%d) of %dx%d in %dx%d blocks from process (%d,%d), context %d", o.name, o.i, o.j, d[2], d[3], d[4 + shift],
      d[5 + shift], d[6 + shift], d[7 + shift], d[1]);
}

}  // namespace

void describe_call(const void* summary, char* out, std::size_t size) noexcept {
  if (size == 0) return;
  out[0] = '\0';
  const call_summary& s = *static_cast<const call_summary*>(summary);
  appender say{out, size};
  for (int i = 0; i < 2; ++i)
    if (s.letter_names[i] != nullptr)
      say("%s=%c ", s.letter_names[i], s.letters[i] != nullptr && *s.letters[i] != '\0' ? *s.letters[i] : '?');
  say("m=%d n=%d", s.m, s.n);
  if (s.product) say(" k=%d", s.k);
  for (const call_summary::operand& o : s.operands) {
    if (o.name == 0) continue;
    say("; ");
    describe_operand(say, o);
  }
  if (s.context != nullptr) say("; ICTXT %d", *s.context);
}

}  // namespace redist::scalapack
