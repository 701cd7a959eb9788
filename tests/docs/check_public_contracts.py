# SPDX-License-Identifier: BSD-3-Clause
"""Every public function declaration states its error contract, so that a caller reading the headers (or the API
reference Doxygen builds from them) knows what can go wrong without reading the sources:
  C++  include/redist/**/*.hpp: each public function (free, member, constructor, template) is declared `noexcept`
       or carries a doc comment (`///` lines just above it, or a trailing `///<`) with `@throws` or the words
       "Throws nothing".
  C    include/redist/redist.h: each function declaration, and each macro that declares functions
       (REDIST_DECLARE_*), has a Doxygen comment just above it with `@return`, or saying how errors are reported
       (PXERBLA, info) or that it returns nothing. C entry points never throw.
The parser is tailored to how these headers are written (one declaration per statement, `///` docs, `/// ----`
section headers that are not docs); --self-test runs it on embedded headers that must pass and must fail.
Usage: check_public_contracts.py SOURCE_DIR | --self-test. Prints `path:line: name` per declaration without a
contract and exits 1 when there is any; otherwise one line with the count of checked declarations."""
import pathlib
import re
import sys

# Not checked, on purpose. Counted as exempt:
#  - `= default` / `= delete` declarations: no code of ours runs;
#  - destructors: implicitly noexcept since C++11, whatever the comment says;
#  - operator== and operator!=: value comparisons that report no error.
# Not counted at all: private and protected members (and what a class nested in such a section declares), which are
# no public API. A forward declaration without a doc passes when the file declares the same function (scope, name,
# parameter types) again with a contract. "Throws nothing" is matched in any case ("...; throws nothing").
EXEMPT_OPERATORS = ("operator==", "operator!=")
NOT_FUNCTION_NAMES = {"decltype", "alignas", "sizeof", "static_assert", "noexcept", "__attribute__", "requires"}
SECTION_HEADER = re.compile(r"^\s*-{3,}")  # `/// ---- local storage ----`: a heading, not a doc
CPP_CONTRACT = re.compile(r"@throws\b|\bthrows nothing\b", re.I)
C_CONTRACT = re.compile(r"@return\b|\bPXERBLA\b|\binfo\b|\breturns nothing\b", re.I)
NOEXCEPT = re.compile(r"\bnoexcept\b(?!\s*\(\s*false\s*\))")


class Comment:
    def __init__(self, start_line, text, code_before):
        self.start_line = self.end_line = start_line
        self.text = text
        self.code_before = code_before  # code precedes it on its first line (a trailing comment)

    @property
    def kind(self):
        t = self.text
        if t.startswith(("///<", "//!<", "/**<", "/*!<")):
            return "trailing_doc"
        if (t.startswith(("///", "//!")) and not t.startswith("////")) or (
            t.startswith(("/**", "/*!")) and not t.startswith("/**/")
        ):
            return "doc"
        return "plain"

    def lines(self):
        """The comment's text, line by line, without the comment markers."""
        t = re.sub(r"^(///?<?|//!<?|/\*\*?<?|/\*!<?)", "", self.text)
        t = re.sub(r"\*/$", "", t)
        return [re.sub(r"^\s*\*(?!/)", "", line) for line in t.split("\n")]


def lex(text):
    """The code with comments, string and character literal contents blanked (newlines kept, so offsets keep their
    lines) and preprocessor lines blanked; the comments; the preprocessor directives as (line, text)."""
    code, comments, directives = [], [], []
    i, n, line = 0, len(text), 1
    line_has_code = False
    while i < n:
        c = text[i]
        if c == "\n":
            code.append(c)
            line += 1
            line_has_code = False
            i += 1
        elif c == "#" and not line_has_code:  # a directive, with its continuation lines
            start, start_line = i, line
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    code.append(" ")
                    code.append("\n")
                    line += 1
                    i += 2
                    continue
                if text.startswith("/*", i) or text.startswith("//", i):
                    break  # a comment after a directive is lexed as a comment
                code.append(" ")
                i += 1
            directives.append((start_line, text[start:i]))
            line_has_code = True
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            comments.append(Comment(line, text[i:end], line_has_code))
            code.append(" " * (end - i))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            comment = Comment(line, text[i:end], line_has_code)
            for ch in text[i:end]:
                code.append("\n" if ch == "\n" else " ")
                line += ch == "\n"
            comment.end_line = line
            comments.append(comment)
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            code.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
            line_has_code = True
        else:
            code.append(c)
            if not c.isspace():
                line_has_code = True
            i += 1
    return "".join(code), comments, directives


def doc_above(comments_by_end, line):
    """The text of the doc comments that end just above `line` (one block: `///` lines or a `/** */`), without
    the section headers and what precedes them; None when the nearest comment above is not a doc."""
    parts = []
    while True:
        comment = comments_by_end.get(line - 1)
        if comment is None or comment.code_before or comment.kind != "doc":
            break
        parts[:0] = comment.lines()
        line = comment.start_line
    for k in range(len(parts) - 1, -1, -1):
        if SECTION_HEADER.match(parts[k]):
            parts = parts[k + 1 :]
            break
    return " ".join(parts) if parts else None


def strip_template_prefix(head):
    while head.startswith("template"):
        m = re.match(r"template\s*<", head)
        if not m:
            break
        depth, i = 1, m.end()
        while i < len(head) and depth:
            depth += {"<": 1, ">": -1}.get(head[i], 0)
            i += 1
        head = head[i:].lstrip()
    return head


OPERATOR = re.compile(r"\boperator\s*(\(\)|\[\]|->\*?|<=>|<<=|>>=|<<|>>|&&|\|\||\+\+|--|[-+*/%^&|~!=<>,]=?)")


def function_name(head):
    """The name of the function `head` declares (a statement's text, template prefix stripped), or None when it
    declares none: the identifier (or operator) before the first parenthesis outside template arguments, with no
    `=` before it (an initializer)."""
    masked = OPERATOR.sub(lambda m: "operator" + "@" * (len(m.group(0)) - len("operator")), head)
    depth = 0
    for i, ch in enumerate(masked):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif ch == "(" and depth == 0:
            before = head[:i].rstrip()
            if "=" in masked[:i].replace("@", ""):
                return None  # `int x = f(1);`
            m = OPERATOR.search(before + " ") if masked[:i].rstrip().endswith("@") else None
            if m and m.end() >= len(before):
                return "operator" + m.group(1)
            m = re.search(r"(~?\b[A-Za-z_]\w*)$", before)
            if not m or m.group(1) in NOT_FUNCTION_NAMES:
                return None
            return m.group(1)
        elif ch == "(":
            return None  # a function type inside template arguments first: std::function<void(int)> member
    return None


def parameter_types(head):
    """The parameter list with names and default arguments dropped, for matching a redeclaration."""
    start = head.find("(")
    depth, i = 0, start
    for i in range(start, len(head)):
        depth += {"(": 1, ")": -1}.get(head[i], 0)
        if depth == 0:
            break
    params, depth, current = [], 0, ""
    for ch in head[start + 1 : i] + ",":
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            p = current.split("=")[0].strip()
            p = re.sub(r"(?<=[\w>&*])\s+[A-Za-z_]\w*$", "", p)  # `const machine& m` -> `const machine&`
            params.append(" ".join(p.split()))
            current = ""
        else:
            current += ch
    return tuple(x for x in params if x)


def check_cpp(text):
    """Returns (declarations, exempt count): each public function declaration as (line, name, has contract)."""
    code, comments, _ = lex(text)
    comments_by_end = {c.end_line: c for c in comments if not c.code_before}
    trailing = {}
    for c in comments:
        if c.kind == "trailing_doc" and c.code_before:
            trailing.setdefault(c.start_line, []).append(" ".join(c.lines()))

    declarations, exempt = [], [0]
    # scopes: (kind, name, access, visible); kind: namespace or class.
    scopes = [("namespace", "", "public", True)]
    stmt, stmt_line, paren = [], None, 0
    skip_depth, after_skip = 0, None

    def visible():
        kind, _, access, vis = scopes[-1]
        return vis and (kind == "namespace" or access == "public")

    def finish(end_line):
        head = " ".join("".join(stmt).split())
        if not head or head.startswith("}"):
            return
        h = strip_template_prefix(head)
        if re.match(r"(using|typedef|static_assert|namespace|enum|class|struct|union|friend\s+(class|struct))\b", h):
            return
        name = function_name(h)
        if name is None or not visible():
            return
        if re.search(r"=\s*(default|delete)\s*;?$", h) or name.startswith("~") or name in EXEMPT_OPERATORS:
            exempt[0] += 1
            return
        doc = doc_above(comments_by_end, stmt_line) or ""
        for line in range(stmt_line, end_line + 1):
            doc += " " + " ".join(trailing.get(line, []))
        has = bool(NOEXCEPT.search(h) or CPP_CONTRACT.search(doc))
        key = (tuple(s[1] for s in scopes), name, parameter_types(h))
        declarations.append((stmt_line, name, has, key))

    line = 1
    for i, ch in enumerate(code):
        if ch == "\n":
            line += 1
        if skip_depth:
            if ch == "{":
                skip_depth += 1
            elif ch == "}":
                skip_depth -= 1
                if skip_depth == 0 and after_skip == "end":  # a function body: the declaration is complete
                    finish(line)
                    stmt, stmt_line = [], None
            continue
        if ch.isspace():
            if stmt:
                stmt.append(" ")
            continue
        if stmt_line is None:
            stmt_line = line
        if ch in "([":
            paren += 1
        elif ch in ")]":
            paren -= 1
        if paren:
            stmt.append(ch)
            continue
        head = " ".join("".join(stmt).split()) if ch in ":;{}" else ""
        if ch == ":" and head in ("public", "private", "protected") and code[i + 1 : i + 2] != ":":
            kind, name, _, vis = scopes[-1]
            scopes[-1] = (kind, name, head, vis)
            stmt, stmt_line = [], None
        elif ch == ";":
            finish(line)
            stmt, stmt_line = [], None
        elif ch == "{":
            h = strip_template_prefix(head)
            scope = re.match(r"(?:inline\s+)?namespace\s*([\w:]*)|extern\s*\"", h)
            cls = re.match(r"(class|struct|union)\s+(?:\[\[.*?\]\]\s*)?(\w+)", h)
            name = function_name(h) if not re.match(r"(enum|class|struct|union)\b", h) else None
            if scope:
                scopes.append(("namespace", scope.group(1) or "", "public", visible()))
                stmt, stmt_line = [], None
            elif cls:
                scopes.append(("class", cls.group(2), "private" if cls.group(1) == "class" else "public", visible()))
                stmt, stmt_line = [], None
            elif name is not None and not re.search(r"\)[^()]*?(?<!:):(?!:)[^{]*[\w>]$", head):
                skip_depth, after_skip = 1, "end"  # an inline body
            else:
                skip_depth, after_skip = 1, "continue"  # enum body, brace initializer, constructor's member init
                stmt.append("{}")
        elif ch == "}":
            kind = scopes.pop()[0] if len(scopes) > 1 else "namespace"
            if kind == "class":
                stmt, stmt_line = ["}"], line  # `};` or `} name;` ends the class statement: nothing to check
            else:
                stmt, stmt_line = [], None
        else:
            stmt.append(ch)
    # A forward declaration passes when the same function (scope, name and parameter types) is declared again in
    # the file with a contract: torus/exchange.hpp declares its factories before the classes that befriend them.
    with_contract = {key for _, _, has, key in declarations if has}
    return [(ln, name, has or key in with_contract) for ln, name, has, key in declarations], exempt[0]


def check_c(text):
    """Returns the C declarations as (line, name, has contract): every function declared outside a macro, and every
    macro whose body declares functions."""
    code, comments, directives = lex(text)
    comments_by_end = {c.end_line: c for c in comments if not c.code_before}
    results = []
    function_macros = set()
    for line, directive in directives:
        m = re.match(r"#\s*define\s+(\w+)\(", directive)
        if not m:
            continue
        function_macros.add(m.group(1))
        body = re.sub(r"/\*.*?\*/|//[^\n]*", " ", directive.split(")", 1)[1], flags=re.S)
        if re.search(r"\b\w+\s*\([^;]*\)\s*;", body):  # it declares functions
            doc = doc_above(comments_by_end, line)
            results.append((line, m.group(1), doc is not None and bool(C_CONTRACT.search(doc))))
    lines = code.split("\n")
    for k, text_line in enumerate(lines):  # macro invocations (REDIST_DECLARE_GEMM(pdgemm)) are no statements
        m = re.match(r"\s*(\w+)\s*\([^;]*\)\s*$", text_line)
        if m and m.group(1) in function_macros:
            lines[k] = ""
        if re.match(r'\s*extern\s*"\s*"\s*\{\s*$', text_line) or re.match(r"\s*\}\s*$", text_line):
            lines[k] = ""  # extern "C" { ... } of C++ compilers
    depth, stmt, stmt_line = 0, "", None
    for k, text_line in enumerate(lines, start=1):
        for ch in text_line + "\n":
            if stmt_line is None and not ch.isspace():
                stmt_line = k
            stmt += ch
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if ch == ";" and depth == 0:
                s = " ".join(stmt.split())
                m = re.match(r"(?!typedef\b)[\w\s*]*?\b(\w+)\s*\(", s)
                if m:
                    doc = doc_above(comments_by_end, stmt_line)
                    results.append((stmt_line, m.group(1), doc is not None and bool(C_CONTRACT.search(doc))))
                stmt, stmt_line = "", None
    return results


def run(root):
    problems, cpp_count, exempt_count, headers = [], 0, 0, 0
    for path in sorted((root / "include/redist").rglob("*.hpp")):
        headers += 1
        declarations, exempt = check_cpp(path.read_text())
        cpp_count += len(declarations)
        exempt_count += exempt
        rel = path.relative_to(root)
        problems += [f"{rel}:{line}: {name}" for line, name, has in declarations if not has]
    c_header = root / "include/redist/redist.h"
    c_results = check_c(c_header.read_text())
    problems += [f"{c_header.relative_to(root)}:{line}: {name}" for line, name, has in c_results if not has]
    for p in problems:
        print(p)
    if problems:
        print(f"public contracts: {len(problems)} declaration(s) without a stated error contract (see above)")
        return 1
    print(
        f"public contracts: {cpp_count} C++ declarations in {headers} headers ({exempt_count} exempt) and "
        f"{len(c_results)} C declarations and declaring macros checked; all state their error contract"
    )
    return 0


# ---- self-test: headers that must pass, and ones that must fail ---------------------------------------------------

GOOD_HPP = """\
#pragma once
namespace demo {
/// Parses text.
/// @throws invalid_argument bad text
template <class E>
E parse(const char* text,
        int flags = 0);
int size() noexcept;  ///< no doc needed
const char* to_string(int x);  ///< "?" otherwise. Throws nothing.
/// Forward declaration of a function documented below.
int later(int);
class thing {
 public:
  thing() = default;
  ~thing();
  thing(const thing&) = delete;
  /// Makes one. Throws nothing.
  explicit thing(int n) : n_(n) {}
  /// ---- accessors ----
  int n() const noexcept { return n_; }
  /// ---- checks ----
  /// Checks it.
  /// @throws invalid_argument a negative n
  void check() const {
    if (n_ < 0) throw 1;
  }
  std::function<void(int)> callback;
  int twice = f(2);
  friend bool operator==(const thing& a, const thing& b) { return a.n_ == b.n_; }
  enum class kind { a, b };

 private:
  int helper();
  int n_ = 0;
};
/// Done later.
/// @throws invalid_argument always
int later(int x);
}  // namespace demo
"""
BAD_HPP = """\
namespace demo {
/// Parses text, but says nothing about errors.
int parse(const char* text);
struct s {
  /// ---- section ----
  int size() const;
  void fine() noexcept;
};
}
"""
GOOD_H = """\
/** Declares redist_x and redist_x_.
 * Returns nothing. Reports errors through PXERBLA; never throws. */
#define DECLARE(name) \\
  void redist_##name(const int* m); \\
  void redist_##name##_(const int* m);
DECLARE(x)
#undef DECLARE
#ifdef __cplusplus
extern "C" {
#endif
/** A struct. */
typedef struct s { int a; } s;
/** Creates.
 * @return MPI_SUCCESS or MPI_ERR_ARG */
int redist_create(int n,
                  s* out);
/// The version. Cannot fail; returns nothing.
void redist_version(int* major);
#ifdef __cplusplus
}
#endif
"""
BAD_H = """\
/** Creates. */
int redist_create(int n);
/* not a Doxygen comment; @return 0 */
int redist_plain(int n);
int redist_bare(void);
/** Declares things. */
#define DECLARE(name) void redist_##name(int);
"""


def self_test():
    failures = []

    def expect(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got}, expected {want}")

    good, exempt = check_cpp(GOOD_HPP)
    expect("good C++ header: missing contracts", [(ln, n) for ln, n, has in good if not has], [])
    expect(
        "good C++ header: checked",
        sorted(n for _, n, _ in good),
        sorted(["parse", "size", "to_string", "later", "thing", "n", "check", "later"]),
    )
    expect("good C++ header: exempt", exempt, 4)
    bad, _ = check_cpp(BAD_HPP)
    expect("bad C++ header: missing contracts", [(ln, n) for ln, n, has in bad if not has], [(3, "parse"), (6, "size")])
    good_c = check_c(GOOD_H)
    expect("good C header", [(n, has) for _, n, has in good_c], [("DECLARE", True), ("redist_create", True),
                                                                  ("redist_version", True)])
    bad_c = check_c(BAD_H)
    expect("bad C header", [(ln, n) for ln, n, has in bad_c if not has],
           [(7, "DECLARE"), (2, "redist_create"), (4, "redist_plain"), (5, "redist_bare")])
    for f in failures:
        print("self-test:", f)
    print(f"public contracts self-test: {'FAILED' if failures else 'passed'} ({len(failures)} problem(s))")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(run(pathlib.Path(sys.argv[1])))
