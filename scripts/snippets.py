#!/usr/bin/env python3
"""Code in the chapters that cannot go stale: the few lines a step changes, copied from the step
file itself into a marked block of a Markdown file, rewritten from the source on every run.

  snippets.py            rewrite every snippet block of README.md, docs/*.md and <folder>/README.md
  snippets.py --check    change nothing; exit 1 naming every block that is stale or whose pattern
                         no longer matches (the CPU test docs_snippets runs this)

Two kinds of block (the fenced code between the markers is generated; write the markers only):

  <!-- snippet FILE "START" [N | "END"] -->      the lines of FILE (relative to the repository root)
  ```cuda                                       from the first one containing START: N lines (default
  ...                                           the rest of the block START opens, i.e. up to the
  ```                                           first line back at START's indentation that closes a
  <!-- /snippet -->                             brace), or up to the first later line containing END.

  <!-- snippet-diff FILE_A FILE_B ["START"] -->  a unified diff from A to B (1 line of context),
  ```diff                                       limited to the hunks after the first line containing
  ...                                           START in B when given: what a step changes, as
  ```                                           `scripts/diff_steps.sh` shows it.
  <!-- /snippet-diff -->

A START that matches no line, or a file that does not exist, is an error: the chapter then names code
that is gone. Standard library only.
"""
import argparse
import difflib
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"(<!-- (snippet|snippet-diff) (.*?) -->\n)(.*?)(<!-- /\2 -->)", re.S)
ARG = re.compile(r'"([^"]*)"|(\S+)')


def args_of(text):
    return [quoted if quoted or bare == "" else bare for quoted, bare in ARG.findall(text)]


def read_lines(path):
    full = os.path.join(ROOT, path)
    if not os.path.isfile(full):
        raise ValueError(f"{path} does not exist")
    with open(full) as f:
        return f.read().splitlines()


def find(lines, pattern, after=0):
    for i in range(after, len(lines)):
        if pattern in lines[i]:
            return i
    return None


def block_end(lines, start):
    """The line that closes the brace block `start` opens (or `start` itself if it opens none)."""
    depth = 0
    opened = False
    for i in range(start, len(lines)):
        code = re.sub(r'"(\\.|[^"\\])*"|//.*', "", lines[i])
        depth += code.count("{") - code.count("}")
        opened = opened or "{" in code
        if opened and depth <= 0:
            return i
        if not opened and i > start + 2:
            return start
    return len(lines) - 1


def language(path):
    return {".cu": "cuda", ".cuh": "cuda", ".h": "cpp", ".cpp": "cpp", ".py": "python", ".sh": "bash",
            ".txt": "cmake"}.get(os.path.splitext(path)[1], "")


def snippet(spec):
    a = args_of(spec)
    if len(a) < 2:
        raise ValueError('snippet needs FILE "START"')
    path, start_pat = a[0], a[1]
    lines = read_lines(path)
    start = find(lines, start_pat)
    if start is None:
        raise ValueError(f'{path}: no line contains "{start_pat}"')
    if len(a) >= 3 and a[2].isdigit():
        end = min(len(lines) - 1, start + int(a[2]) - 1)
    elif len(a) >= 3:
        end = find(lines, a[2], start + 1)
        if end is None:
            raise ValueError(f'{path}: no line after "{start_pat}" contains "{a[2]}"')
    else:
        end = block_end(lines, start)
    body = lines[start:end + 1]
    indent = min((len(l) - len(l.lstrip()) for l in body if l.strip()), default=0)
    body = [l[indent:] for l in body]
    return f"```{language(path)}\n" + "\n".join(body) + "\n```\n"


def snippet_diff(spec):
    a = args_of(spec)
    if len(a) < 2:
        raise ValueError("snippet-diff needs FILE_A FILE_B")
    old, new = read_lines(a[0]), read_lines(a[1])
    from_line = 0
    if len(a) >= 3:
        hit = find(new, a[2])
        if hit is None:
            raise ValueError(f'{a[1]}: no line contains "{a[2]}"')
        from_line = hit
    out = []
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(1):
        group = [op for op in group if op[4] > from_line]  # what lies before START in B is left out
        if not any(op[0] != "equal" for op in group):
            continue
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                keep = old[i1:i2]
                out += [" " + l for l in (keep[-1:] if j1 < from_line else keep)]
            else:
                out += ["-" + l for l in old[i1:i2]] + ["+" + l for l in new[j1:j2]]
        out.append("@@")
    if not out:
        raise ValueError(f"{a[0]} and {a[1]} do not differ")
    return "```diff\n" + "\n".join(out[:-1]) + "\n```\n"


def markdown_files():
    files = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(ROOT, "*", "*.md")))
    return [f for f in dict.fromkeys(files) if os.path.isfile(f)]


def rewrite(text, where, problems):
    def one(m):
        try:
            body = snippet(m.group(3)) if m.group(2) == "snippet" else snippet_diff(m.group(3))
        except ValueError as e:
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{where}:{line}: {e}")
            return m.group(0)
        return m.group(1) + body + m.group(5)
    return BLOCK.sub(one, text)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv[1:])
    problems, stale, blocks = [], [], 0
    for path in markdown_files():
        with open(path) as f:
            text = f.read()
        rel = os.path.relpath(path, ROOT)
        blocks += len(BLOCK.findall(text))
        new = rewrite(text, rel, problems)
        if new != text:
            if a.check:
                stale.append(rel)
            else:
                with open(path, "w") as f:
                    f.write(new)
    for p in problems:
        print(p)
    for s in stale:
        print(f"{s}: snippets out of date (run scripts/snippets.py)")
    print(f"snippets: {blocks} blocks, {len(problems)} broken, {len(stale)} files {'stale' if a.check else 'rewritten'}")
    return 1 if problems or (a.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
