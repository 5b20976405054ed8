#!/usr/bin/env python3
"""Check that the Markdown docs still match the repository, so they cannot rot unnoticed.

    scripts/check_docs.py [--root DIR]

Scans README.md, docs/*.md and every ladder chapter <folder>/README.md (a folder is a directory
whose CMakeLists.txt calls add_step). CPU only and needs no build: the steps are read from the
folders' add_step(NN_name ...) lines; the step id is <folder>/<NN_name>, its executable
build/bin/<folder>_<NN_name> (side-ladder steps such as aat_01_strided or tf32_02_mma_sync too).

What is checked, and why:
  1. links   A relative link or image target must exist (http(s), mailto and other schemes are
             skipped; #anchor stripped). A link to a heading (file.md#heading or #heading) must name
             a heading of that file by its GitHub slug: renamed headings break such links silently.
  2. images  Every image under <folder>/img/ or docs/img/ is referenced by some Markdown file: an
             orphan is a chart the chapters no longer show (or one a generator writes for nothing).
  3. commands  In a shell code block (``` with no language, bash, sh, shell, console; '# ' lines are
             comments, '$ ' prompts and a notebook's '!' are stripped, '\\' continuations joined):
             build/bin/<name> must be <folder>_<step>; scripts/<x>.sh|.py must exist; the steps and
             folders given to scripts/profile.sh, sanitize.sh, diff_steps.sh, shape_sweep.sh,
             tune_sgemm.sh and run_all.sh must exist, in the form that script accepts. Copying a
             command that names a renamed step is the first thing a reader does, and it fails.
  4. results A path under results/ (anywhere, code blocks included) names something a clone does
             not have. Not counted: templates (results/<device>/latest, results/variant_$v), a path
             a script writes by default (it appears in a file of scripts/, e.g. results/tune/), and a
             path that a command of the same code block writes (--out DIR, -o DIR, > FILE).
  5. values  <!-- v [LABEL:]FOLDER/STEP FIELD --> markers (filled in by scripts/report.py) must name
             an existing step, and FIELD one report.py knows (speedup:OTHER naming a step too).

Prints one line per problem, FILE:LINE: what, then "docs: N files, M problems"; exits 1 if there is
any problem, 0 if none. Python standard library only; tests/check_docs_test.py is its test.
"""
import argparse
import glob
import os
import re
import shlex
import sys
import unicodedata
import urllib.parse
from dataclasses import dataclass, field

SHELL_LANGUAGES = {"", "bash", "sh", "shell", "console", "shell-session", "zsh"}
VALUE_FIELDS = {"kernel_ms", "call_ms", "total_ms", "metric", "pct_of_ceiling", "ceiling",
                "pct_of_spec_dram", "pct_of_spec_fp32", "pct_of_spec_tf32"}
TEMPLATE_MARKS = ("<", ">", "$", "{", "*", "...")  # a placeholder, not a literal path or name
OUTPUT_OPTIONS = {"--out", "--output", "-o", ">", ">>"}
COMMAND_SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "|&", ";;"}


@dataclass(frozen=True)
class Problem:
    path: str  # relative to the root
    line: int
    what: str

    def __str__(self):
        return f"{self.path}:{self.line}: {self.what}"


@dataclass
class Repo:
    root: str
    steps: dict = field(default_factory=dict)  # folder -> [step names], in CMakeLists.txt order
    scripts_text: str = ""  # every file under scripts/, for the results/ paths they write

    def is_step(self, folder, name):
        return name in self.steps.get(folder, ())

    def executables(self):
        return {f"{folder}_{name}" for folder, names in self.steps.items() for name in names}

    def folders_with_step(self, name):
        return [folder for folder, names in self.steps.items() if name in names]


@dataclass
class CodeBlock:
    language: str
    first_line: int  # line number of the first line inside the fence
    lines: list


# ---- the repository ---------------------------------------------------------------------------

def strip_cmake_comment(line):
    """A CMake line without its # comment (a # inside a quoted argument is kept)."""
    quoted = False
    for i, c in enumerate(line):
        if c == '"':
            quoted = not quoted
        elif c == "#" and not quoted:
            return line[:i]
    return line


def read_steps(cmake_text):
    """The step names of a folder's CMakeLists.txt: the first argument of each add_step( call."""
    code = "\n".join(strip_cmake_comment(line) for line in cmake_text.splitlines())
    return re.findall(r"(?m)^\s*add_step\s*\(\s*([A-Za-z0-9_]+)", code)


def load_repo(root):
    repo = Repo(root=root)
    for cmake in sorted(glob.glob(os.path.join(root, "*", "CMakeLists.txt"))):
        with open(cmake, encoding="utf-8") as f:
            steps = read_steps(f.read())
        if steps:
            repo.steps[os.path.basename(os.path.dirname(cmake))] = steps
    texts = []
    for path in sorted(glob.glob(os.path.join(root, "scripts", "*"))):
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                texts.append(f.read())
    repo.scripts_text = "\n".join(texts)
    return repo


def markdown_files(repo):
    """README.md, docs/*.md and each folder's Markdown files (its README.md chapter, an appendix),
    as paths relative to the root."""
    found = ["README.md"] if os.path.isfile(os.path.join(repo.root, "README.md")) else []
    found += sorted(os.path.relpath(p, repo.root)
                    for p in glob.glob(os.path.join(repo.root, "docs", "*.md")))
    for folder in sorted(repo.steps):
        found += sorted(os.path.relpath(p, repo.root) for p in glob.glob(os.path.join(repo.root, folder, "*.md")))
    return found


def image_files(repo):
    """Every file under <folder>/img/ and docs/img/, as paths relative to the root."""
    images = []
    for folder in sorted(repo.steps) + ["docs"]:
        img_dir = os.path.join(repo.root, folder, "img")
        for dirpath, _, names in os.walk(img_dir):
            images += [os.path.relpath(os.path.join(dirpath, n), repo.root) for n in names]
    return sorted(images)


# ---- Markdown structure -----------------------------------------------------------------------

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")


def split_code_blocks(lines):
    """(code blocks, prose lines): prose is the file with every fenced block's lines blanked, so
    offsets still map to line numbers."""
    blocks, prose, block, fence = [], [], None, None
    for number, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if block is None and m:
            fence = m.group(1)
            block = CodeBlock(m.group(2).lower(), number + 1, [])
            prose.append("")
        elif block is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2):
                blocks.append(block)
                block = None
            else:
                block.lines.append(line)
            prose.append("")
        else:
            prose.append(line)
    if block is not None:  # an unclosed fence runs to the end of the file
        blocks.append(block)
    return blocks, prose


def blank_inline_code(text):
    """The text with each `code span` replaced by spaces (newlines kept): links in code are code."""
    return re.sub(r"(`+)(.+?)\1", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def github_slug(heading):
    """The anchor GitHub gives a heading: its rendered text lower-cased, punctuation dropped (letters,
    digits, marks, '_' and '-' kept), spaces turned into '-'."""
    parts = re.split(r"(`+[^`]*`+)", heading)
    text = ""
    for i, part in enumerate(parts):
        if i % 2:  # a code span: its text as is
            text += part.strip("`")
        else:
            part = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", part)  # a link: its text
            text += re.sub(r"<[^>]+>", "", part)  # HTML tags render as nothing
    kept = []
    for c in text.lower():
        category = unicodedata.category(c)
        if c in "-_ " or category[0] in "LM" or category in ("Nd", "Nl", "Pc"):
            kept.append(c)
    return "".join(kept).replace(" ", "-")


def heading_anchors(lines):
    """Every anchor a Markdown file defines: heading slugs (duplicates get -1, -2, ...) and HTML
    id/name attributes."""
    _, prose = split_code_blocks(lines)
    anchors, seen = set(), {}
    previous = ""
    for line in prose:
        heading = None
        m = re.match(r"^ {0,3}#{1,6}(?:\s+(.*?))?(?:\s+#+)?\s*$", line)
        if m:
            heading = m.group(1) or ""
        elif re.match(r"^ {0,3}(=+|-+)\s*$", line) and previous.strip() and not previous.lstrip().startswith(("|", "#")):
            heading = previous.strip()  # setext: the line above is the heading
        if heading is not None:
            slug = github_slug(heading)
            anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
        anchors.update(re.findall(r"""<[^>]*\b(?:id|name)=["']([^"']+)["']""", line))
        previous = line
    return anchors


# ---- 1 and 2: links, anchors and images -------------------------------------------------------

INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFERENCE_DEFINITION = re.compile(r"(?m)^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_TARGET = re.compile(r"""<(?:img|a|source)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""", re.I)


def link_targets(prose_text):
    """(line, target) for every link, image, reference definition and HTML src/href."""
    for pattern in (INLINE_LINK, REFERENCE_DEFINITION, HTML_TARGET):
        for m in pattern.finditer(prose_text):
            yield line_of(prose_text, m.start()), m.group(1).strip("<>")


def is_external(target):
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target)) or target.startswith("//")


def resolve(repo, md_path, target_path):
    """The root-relative path a link target names ('/x' is root-relative, as on GitHub)."""
    if target_path.startswith("/"):
        return os.path.normpath(target_path.lstrip("/"))
    return os.path.normpath(os.path.join(os.path.dirname(md_path), target_path))


class AnchorCache:
    def __init__(self, root):
        self.root, self.cache = root, {}

    def anchors(self, rel_path):
        if rel_path not in self.cache:
            with open(os.path.join(self.root, rel_path), encoding="utf-8") as f:
                self.cache[rel_path] = heading_anchors(f.read().splitlines())
        return self.cache[rel_path]


def check_links(repo, md_path, prose_text, anchor_cache, referenced):
    """Rule 1; adds every resolved local target to `referenced` (for rule 2)."""
    problems = []
    for line, target in link_targets(prose_text):
        if not target or is_external(target):
            continue
        path_part, _, anchor = target.partition("#")
        path_part = urllib.parse.unquote(path_part)
        rel = resolve(repo, md_path, path_part) if path_part else md_path
        if rel == ".." or rel.startswith("../"):
            problems.append(Problem(md_path, line, f"link '{target}' points outside the repository"))
            continue
        full = os.path.join(repo.root, rel)
        if not os.path.exists(full):
            problems.append(Problem(md_path, line, f"link target '{target}' does not exist"))
            continue
        referenced.add(rel)
        if anchor and rel.endswith(".md") and os.path.isfile(full):
            if urllib.parse.unquote(anchor).lower() not in anchor_cache.anchors(rel):
                problems.append(Problem(md_path, line, f"link '{target}': no heading "
                                        f"'#{anchor}' in {rel}"))
    return problems


def check_orphan_images(repo, referenced):
    """Rule 2."""
    return [Problem(image, 1, "image is referenced by no Markdown file")
            for image in image_files(repo) if image not in referenced]


# ---- 3: commands in code blocks ---------------------------------------------------------------

def command_lines(block):
    """(line number, command) for each command of a shell code block: comments dropped, '$ ' and
    '!' prefixes stripped, '\\' continuations joined. In a console block that has '$ ' prompts,
    only the prompted lines are commands (the rest is output)."""
    prompted = block.language == "console" and any(l.lstrip().startswith("$ ") for l in block.lines)
    commands, pending, start = [], "", 0
    for number, line in enumerate(block.lines, block.first_line):
        text = line.strip()
        if not pending:
            if prompted and not text.startswith("$ "):
                continue
            text = re.sub(r"^\$ ", "", text)
            text = text[1:] if text.startswith("!") else text
            if not text or text.startswith("#"):
                continue
            start = number
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        commands.append((start, pending + text))
        pending = ""
    if pending:
        commands.append((start, pending))
    return commands


def strip_trailing_comment(command):
    """The command without its trailing '# comment' (a '#' that starts a word, outside quotes)."""
    quote = None
    for i, c in enumerate(command):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or command[i - 1] in " \t"):
            return command[:i].rstrip()
    return command


def tokenize(command):
    """Shell words of a command, with ; && | ( ) > as tokens of their own."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: fall back to plain words
        return command.split()


def drop_redirections(words):
    """The words without '> FILE', '2>&1' and the like: they are not arguments."""
    kept, i = [], 0
    while i < len(words):
        if re.fullmatch(r"[<>]+&?|&>", words[i]):
            i += 2
            continue
        if words[i].isdigit() and i + 1 < len(words) and words[i + 1].startswith((">", "<")):
            i += 1
            continue
        kept.append(words[i])
        i += 1
    return kept


def simple_commands(tokens):
    """The tokens split at ; && || | ( ) &: each simple command's words."""
    current = []
    for token in tokens:
        if token in COMMAND_SEPARATORS:
            if current:
                yield current
            current = []
        else:
            current.append(token)
    if current:
        yield current


def is_template(token):
    return any(mark in token for mark in TEMPLATE_MARKS)


def step_like(token):
    """Whether a word looks like a step: folder/NN_name, folder_NN_name or a bare NN_name (a side
    ladder's prefix included: tf32_02_mma_sync, aat_01_strided)."""
    return bool(re.match(r"^([a-z][a-z0-9_]*/)?([a-z][a-z0-9]*_)*\d\d_\w+$", token))


def describe_step(repo, token):
    """None if `token` names a step as folder/step or folder_step; else what is wrong with it."""
    if "/" in token:
        folder, _, name = token.partition("/")
        if folder not in repo.steps:
            return f"'{token}': no folder '{folder}'"
        return None if repo.is_step(folder, name) else f"'{token}': no step '{name}' in {folder}"
    if token in repo.executables():
        return None
    folders = repo.folders_with_step(token)
    if folders:
        folder = folders[0] if len(folders) == 1 else "FOLDER"
        return f"'{token}' is a bare step name; this script takes {folder}/{token}"
    return f"'{token}' is not a step"


def describe_step_or_name(repo, token, folder=None):
    """None if `token` is a step id or a bare step name (of `folder` when given)."""
    if "/" in token:
        return describe_step(repo, token)
    if folder is not None:
        return None if repo.is_step(folder, token) else f"'{token}': no step of that name in {folder}"
    return None if repo.folders_with_step(token) else f"'{token}' is not a step"


def positional_args(args, options_with_value):
    """The positional words before '--', the options' values left out; and {option: [values]}."""
    args = drop_redirections(args)
    positionals, values, i = [], {}, 0
    while i < len(args):
        word = args[i]
        if word == "--":
            break
        if word in options_with_value and i + 1 < len(args):
            values.setdefault(word, []).append(args[i + 1])
            i += 2
            continue
        if word.startswith("-"):
            i += 1
            continue
        positionals.append(word)
        i += 1
    return positionals, values


def check_folder(repo, token):
    if is_template(token) or token in repo.steps:
        return []
    hint = " (this script takes a folder here, not a step)" if step_like(token) else ""
    return [f"'{token}' is not a ladder folder{hint}"]


def check_profile_args(repo, args):
    """profile.sh STEP [STEP2]: folder/step, folder_step or a path to the executable."""
    positionals, _ = positional_args(args, set())
    found = []
    for token in positionals:
        if is_template(token) or token.startswith(("build/", "./", "/")):
            continue  # a path: build/bin/<name> is checked on its own
        found.append(describe_step(repo, token))
    return [f for f in found if f]


def check_sanitize_args(repo, args):
    """sanitize.sh [folder...] [--steps S1,S2] [--tool T] [-j N]."""
    positionals, values = positional_args(args, {"--steps", "--tool", "-j"})
    found = []
    for token in positionals:
        found += check_folder(repo, token)
    for listed in values.get("--steps", []):
        found += [describe_step_or_name(repo, t) for t in listed.split(",") if t and not is_template(t)]
    return [f for f in found if f]


def check_diff_steps_args(repo, args):
    """diff_steps.sh FOLDER A B: A and B pick the step file FOLDER/A_*.cu, so a step of FOLDER
    must start with 'A_' (a number, or a side ladder's prefix such as aat_02)."""
    positionals, _ = positional_args(args, set())
    if len(positionals) != 3 or any(is_template(t) for t in positionals):
        return []
    folder, *prefixes = positionals
    if folder not in repo.steps:
        return check_folder(repo, folder)
    return [f"'{p}': no step of {folder} starts with '{p}_'" for p in prefixes
            if not any(step.startswith(p + "_") for step in repo.steps[folder])]


def check_shape_sweep_args(repo, args):
    """shape_sweep.sh FOLDER --steps S1,S2 --shapes ...: the steps by name or id."""
    positionals, values = positional_args(args, {"--steps", "--shapes", "--repeat", "--out"})
    found = []
    folder = positionals[0] if positionals else None
    if folder is not None:
        found += check_folder(repo, folder)
        if folder not in repo.steps:
            folder = None
    for listed in values.get("--steps", []):
        found += [describe_step_or_name(repo, t, folder) for t in listed.split(",")
                  if t and not is_template(t)]
    return [f for f in found if f]


def check_tune_sgemm_args(repo, args):
    """tune_sgemm.sh [--step NAME]: a step of sgemm (sgemm/ or sgemm_ prefix allowed)."""
    _, values = positional_args(args, {"--step", "--shapes", "--reps"})
    found = []
    for token in values.get("--step", []):
        name = re.sub(r"^sgemm[/_]", "", token)
        if not is_template(token) and not repo.is_step("sgemm", name):
            found.append(f"'{token}': no step of that name in sgemm")
    return found


def check_run_all_args(repo, args):
    """run_all.sh [folder...] [-- step flags]."""
    positionals, _ = positional_args(args, set())
    return [f for token in positionals for f in check_folder(repo, token)]


SCRIPT_ARGUMENT_CHECKS = {
    "profile.sh": check_profile_args,
    "sanitize.sh": check_sanitize_args,
    "diff_steps.sh": check_diff_steps_args,
    "shape_sweep.sh": check_shape_sweep_args,
    "tune_sgemm.sh": check_tune_sgemm_args,
    "run_all.sh": check_run_all_args,
}
SCRIPT_PATH = re.compile(r"(?<![\w./-])(?:\./)?scripts/([\w.-]+\.(?:sh|py))(?![\w.-])")
EXECUTABLE_PATH = re.compile(r"(?<![\w./-])(?:\./)?build/bin/(\w*)(\S*)")


def check_command(repo, command):
    """Rule 3 for one command line: what is wrong with it (a list of messages)."""
    command = strip_trailing_comment(command)
    found = []
    for m in EXECUTABLE_PATH.finditer(command):
        name, rest = m.groups()
        if name and not is_template(rest) and name not in repo.executables():
            found.append(f"build/bin/{name}: no such step executable")
    for m in SCRIPT_PATH.finditer(command):
        if not os.path.isfile(os.path.join(repo.root, "scripts", m.group(1))):
            found.append(f"scripts/{m.group(1)} does not exist")
    for words in simple_commands(tokenize(command)):
        for i, word in enumerate(words):
            m = SCRIPT_PATH.fullmatch(word) or re.fullmatch(r"(?:\./)?scripts/([\w.-]+)", word)
            if m and m.group(1) in SCRIPT_ARGUMENT_CHECKS:
                found += [f"scripts/{m.group(1)}: {what}"
                          for what in SCRIPT_ARGUMENT_CHECKS[m.group(1)](repo, words[i + 1:])]
                break
    return found


def check_code_blocks(repo, md_path, blocks):
    problems = []
    for block in blocks:
        if block.language not in SHELL_LANGUAGES:
            continue
        for line, command in command_lines(block):
            problems += [Problem(md_path, line, what) for what in check_command(repo, command)]
    return problems


# ---- 4: paths under results/ ------------------------------------------------------------------

RESULTS_PATH = re.compile(r"(?<![\w./$-])results/[^\s`'\"()\[\],;|]*")


def block_outputs(block):
    """The paths a shell code block's commands write: --out DIR, -o DIR, > FILE."""
    outputs = set()
    if block.language not in SHELL_LANGUAGES:
        return outputs
    for _, command in command_lines(block):
        tokens = tokenize(strip_trailing_comment(command))
        for option, value in zip(tokens, tokens[1:]):
            if option in OUTPUT_OPTIONS:
                outputs.add(value.rstrip("/"))
        outputs.update(t.split("=", 1)[1].rstrip("/") for t in tokens if t.startswith("--out="))
    return outputs


def written_by_script(repo, path):
    """Whether a script writes this path by default (scripts/ mention it, e.g. results/tune/)."""
    return re.search(re.escape(path) + r"(?![\w.-])", repo.scripts_text) is not None


def check_results_paths(repo, md_path, lines, blocks):
    """Rule 4."""
    outputs_at = {}  # line number -> what the code block holding it writes
    for block in blocks:
        outputs = block_outputs(block)
        for number in range(block.first_line, block.first_line + len(block.lines)):
            outputs_at[number] = outputs
    problems = []
    for number, line in enumerate(lines, 1):
        for m in RESULTS_PATH.finditer(line):
            path = m.group(0).rstrip(".:>").rstrip("/")
            if is_template(path) or written_by_script(repo, path):
                continue
            outputs = outputs_at.get(number, ())
            if any(path == out or path.startswith(out + "/") for out in outputs):
                continue
            problems.append(Problem(md_path, number, f"cites {m.group(0).rstrip('.:')}: a clone has "
                                    "no results/ (cite the numbers, not the run's files)"))
    return problems


# ---- 5: value markers -------------------------------------------------------------------------

VALUE_MARKER = re.compile(r"<!-- v (\S+) (\S+) -->")


def check_value_markers(repo, md_path, prose_text):
    problems = []
    for m in VALUE_MARKER.finditer(prose_text):
        line, step_id, value_field = line_of(prose_text, m.start()), m.group(1), m.group(2)
        step_id = step_id.split(":", 1)[1] if ":" in step_id else step_id  # LABEL:STEP_ID
        folder, _, name = step_id.partition("/")
        if not repo.is_step(folder, name):
            problems.append(Problem(md_path, line, f"value marker names no step: '{m.group(1)}'"))
            continue
        if value_field.startswith("speedup:"):
            other = value_field.split(":", 1)[1]
            if not repo.is_step(folder, other):
                problems.append(Problem(md_path, line, f"value marker '{value_field}': no step "
                                        f"'{other}' in {folder}"))
        elif value_field not in VALUE_FIELDS and not re.match(r"^(extra|spec|work)\.\w+$", value_field):
            problems.append(Problem(md_path, line, f"value marker: unknown field '{value_field}'"))
    return problems


# ---- the whole check --------------------------------------------------------------------------

def check_markdown_file(repo, md_path, anchor_cache, referenced):
    with open(os.path.join(repo.root, md_path), encoding="utf-8") as f:
        lines = f.read().splitlines()
    blocks, prose = split_code_blocks(lines)
    prose_text = blank_inline_code("\n".join(prose))
    return (check_links(repo, md_path, prose_text, anchor_cache, referenced)
            + check_code_blocks(repo, md_path, blocks)
            + check_results_paths(repo, md_path, lines, blocks)
            + check_value_markers(repo, md_path, prose_text))


def check_docs(root):
    """(number of Markdown files, problems) for the repository at `root`."""
    repo = load_repo(os.path.abspath(root))
    anchor_cache, referenced = AnchorCache(repo.root), set()
    files = markdown_files(repo)
    problems = []
    for md_path in files:
        found = check_markdown_file(repo, md_path, anchor_cache, referenced)
        problems += sorted(found, key=lambda p: p.line)
    problems += check_orphan_images(repo, referenced)
    return len(files), problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the repository to check (default: the one holding this script)")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.root):
        print(f"error: no directory {args.root}", file=sys.stderr)
        return 2
    count, problems = check_docs(args.root)
    for problem in problems:
        print(problem)
    print(f"docs: {count} files, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
