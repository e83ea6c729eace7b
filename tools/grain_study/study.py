"""Study files: reading them (with the line of every element) and expanding them into runs.

A study file is XML (docs/studies.md)::

    <Study name="incline_mu">
      <Scene file="incline.xml"/>
      <Parameters>
        <Parameter name="mu" set="SceneSettings/ContactParameterMap/ContactParameter/@mu"
                   values="0.1 0.3 0.5"/>
        <Parameter name="solver" set="SceneSettings/TimeStepperSettings/InclusionSolverSettings/@method"
                   values="SORContact JOR"/>
      </Parameters>
      ...
    </Study>

Every problem is reported as a StudyError naming the file and line.
"""

import itertools
import math
import os
import re
import xml.parsers.expat

from .study_format import (BODY_QUANTITIES, BODY_RE, ELEMENTS, MEMORY_RE, NAME_RE, REDUCERS, SCHEDULERS,
                           STUDY_NAME_RE, WALL_TIME_RE)

PLACEHOLDER_RE = re.compile(r"\$\{([^}]*)\}")

# Columns every table has; parameters and summary values may not use these names.
RESERVED = {"run", "folder", "status", "final_time", "steps", "mean_iterations", "wall_time"}


class StudyError(Exception):
    """A problem in a study file (or its template) at file:line."""

    def __init__(self, file, line, message):
        super().__init__(message)
        self.file = str(file)
        self.line = line
        self.message = message

    def __str__(self):
        if self.line:
            return f"{self.file}:{self.line}: {self.message}"
        return f"{self.file}: {self.message}"


class Node:
    """An XML element with the line it starts on."""

    def __init__(self, tag, attrs, line):
        self.tag = tag
        self.attrs = dict(attrs)
        self.line = line
        self.children = []
        self.text = ""


def parse_xml(path):
    """Reads an XML file into Nodes; a syntax error is a StudyError with its line."""
    with open(path, "rb") as f:
        data = f.read()
    parser = xml.parsers.expat.ParserCreate()
    stack = []
    root = []

    def start(tag, attrs):
        node = Node(tag, attrs, parser.CurrentLineNumber)
        if stack:
            stack[-1].children.append(node)
        else:
            root.append(node)
        stack.append(node)

    def end(_tag):
        stack.pop()

    def chars(text):
        if stack:
            stack[-1].text += text

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as e:
        raise StudyError(path, e.lineno, f"not well-formed XML: {xml.parsers.expat.ErrorString(e.code)}")
    return root[0]


def format_number(x):
    """Shortest text of a generated value: 12 significant digits, so 0.1 + 0.2 is '0.3'."""
    text = f"{x:.12g}"
    return text


class Parameter:
    """One varied quantity: its values and how they reach the scene."""

    def __init__(self, name, values, set_path, line):
        self.name = name
        self.values = values  # list of str
        self.set_path = set_path  # XPath of --set, or None for a ${name} placeholder
        self.line = line

    @property
    def placeholder(self):
        return self.set_path is None


class SummaryValue:
    """A named value collected per run (docs/studies.md, "Summary values")."""

    def __init__(self, name, line, kind, **spec):
        self.name = name
        self.line = line
        self.kind = kind  # "table", "comment" or "body"
        self.spec = spec


class Study:
    """A parsed study file."""

    def __init__(self):
        self.file = None
        self.name = None
        self.template = None
        self.media_dir = None
        self.parameters = []  # all Parameters, in file order
        self.factors = []  # list of lists of Parameters: grid over factors, zip inside
        self.ranks = 1
        self.wall_time = None
        self.memory = None
        self.partition = None
        self.account = None
        self.max_concurrent = None
        self.scheduler = "shell"
        self.post_process = []  # (line, command text)
        self.summary = []  # SummaryValues
        self.plot = None  # dict x, y, series, file, logx, logy

    def expand(self):
        """All runs, as a list of {parameter name: value}, grid order (last factor fastest)."""
        per_factor = []
        for factor in self.factors:
            n = len(factor[0].values)
            per_factor.append([{p.name: p.values[i] for p in factor} for i in range(n)])
        runs = []
        for combination in itertools.product(*per_factor):
            values = {}
            for part in combination:
                values.update(part)
            runs.append(values)
        return runs


def _attrs(node, file):
    """The attributes of node, checked against the element's row of study_format.ELEMENTS."""
    spec = ELEMENTS[node.tag]
    for key in node.attrs:
        if key not in spec.attributes:
            raise StudyError(file, node.line, f"<{node.tag}>: unknown attribute '{key}' "
                                              f"(allowed: {', '.join(sorted(spec.attributes))})")
    for key in spec.required:
        if key not in node.attrs:
            raise StudyError(file, node.line, f"<{node.tag}>: missing attribute '{key}'")
    return node.attrs


def _number(text, file, line, what):
    try:
        value = float(text)
    except ValueError:
        raise StudyError(file, line, f"{what}: '{text}' is not a number")
    if not math.isfinite(value):
        raise StudyError(file, line, f"{what}: '{text}' is not a finite number")
    return value


def _count(text, file, line, what):
    try:
        value = int(text)
    except ValueError:
        raise StudyError(file, line, f"{what}: '{text}' is not a whole number")
    if value < 1:
        raise StudyError(file, line, f"{what}: the range is empty (count {value}); give at least 1")
    return value


def _range(text, file, line, what, log):
    parts = text.split()
    if len(parts) != 3:
        raise StudyError(file, line, f"{what}: expected 'FROM TO COUNT', got '{text}'")
    lo = _number(parts[0], file, line, what)
    hi = _number(parts[1], file, line, what)
    n = _count(parts[2], file, line, what)
    if log:
        if lo <= 0 or hi <= 0:
            raise StudyError(file, line, f"{what}: FROM and TO must be > 0 (got {parts[0]}, {parts[1]})")
        lo, hi = math.log10(lo), math.log10(hi)
    if n == 1:
        points = [lo]
    else:
        points = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
    if log:
        points = [10.0 ** p for p in points]
    return [format_number(p) for p in points]


def _parameter(node, file):
    a = _attrs(node, file)
    name = a["name"]
    if not NAME_RE.match(name):
        raise StudyError(file, node.line, f"parameter name '{name}': use letters, digits, '_', ':', '.', '-'")
    if name in RESERVED:
        raise StudyError(file, node.line, f"parameter name '{name}' is reserved for a table column")
    given = [k for k in ("values", "linspace", "logspace") if k in a]
    if len(given) != 1:
        raise StudyError(file, node.line, f"parameter '{name}': give exactly one of values=, linspace=, logspace=")
    what = f"parameter '{name}' {given[0]}"
    if "values" in a:
        values = a["values"].split()
        if not values:
            raise StudyError(file, node.line, f"{what}: the list is empty")
    else:
        values = _range(a[given[0]], file, node.line, what, log=given[0] == "logspace")
    set_path = a.get("set")
    if set_path is not None and not set_path.strip():
        raise StudyError(file, node.line, f"parameter '{name}': set= is empty")
    return Parameter(name, values, set_path, node.line)


def _repeats(node, file):
    a = _attrs(node, file)
    count = _count(a["count"], file, node.line, "<Repeats> count")
    first = a.get("firstSeed", "1")
    try:
        first = int(first)
    except ValueError:
        raise StudyError(file, node.line, f"<Repeats> firstSeed: '{first}' is not a whole number")
    name = a.get("name", "seed")
    if not NAME_RE.match(name) or name in RESERVED:
        raise StudyError(file, node.line, f"<Repeats> name '{name}' is not usable as a column")
    return Parameter(name, [str(first + k) for k in range(count)], a.get("set"), node.line)


def _summary_value(node, file):
    a = _attrs(node, file)
    name = a["name"]
    if not NAME_RE.match(name) or name in RESERVED:
        raise StudyError(file, node.line, f"summary value name '{name}' is not usable as a column")
    if "body" in a:
        body = a["body"]
        m = BODY_RE.match(body)
        if not m:
            raise StudyError(file, node.line, f"value '{name}': body='{body}' must be GROUP:NUMBER, e.g. 0:0")
        quantity = a.get("quantity", "distance")
        if quantity not in BODY_QUANTITIES:
            raise StudyError(file, node.line, f"value '{name}': quantity '{quantity}' is not one of "
                                              f"{', '.join(BODY_QUANTITIES)}")
        return SummaryValue(name, node.line, "body", group=int(m.group(1)), number=int(m.group(2)),
                            quantity=quantity)
    if "file" not in a:
        raise StudyError(file, node.line, f"value '{name}': give body= or file= (with column= or comment=)")
    if "comment" in a:
        return SummaryValue(name, node.line, "comment", file=a["file"], key=a["comment"])
    if "column" not in a:
        raise StudyError(file, node.line, f"value '{name}': file= needs column= or comment=")
    reduce = a.get("reduce", "last")
    if reduce not in REDUCERS:
        raise StudyError(file, node.line, f"value '{name}': reduce '{reduce}' is not one of {', '.join(REDUCERS)}")
    return SummaryValue(name, node.line, "table", file=a["file"], column=a["column"], reduce=reduce)


def _wall_time(text, file, line):
    if not WALL_TIME_RE.match(text):
        raise StudyError(file, line, f"<Resources> wallTime '{text}': use [D-]HH:MM:SS, e.g. 02:00:00")
    return text


def read_study(path):
    """Parses and checks a study file; returns a Study or raises StudyError."""
    path = os.path.abspath(path)
    root = parse_xml(path)
    file = path
    if root.tag != "Study":
        raise StudyError(file, root.line, f"root element must be <Study>, not <{root.tag}>")
    study = Study()
    study.file = path
    a = _attrs(root, file)
    study.name = a.get("name", os.path.splitext(os.path.basename(path))[0].split(".")[0])
    if not STUDY_NAME_RE.match(study.name):
        raise StudyError(file, root.line, f"study name '{study.name}': use letters, digits, '_', '.', '-' "
                                          "(it is the job name of the scheduler)")
    base = os.path.dirname(path)
    seen = set()
    names = {}
    for node in root.children:
        if node.tag in seen and node.tag != "Parameters":
            raise StudyError(file, node.line, f"<{node.tag}> given twice")
        seen.add(node.tag)
        if node.tag == "Scene":
            a = _attrs(node, file)
            study.template = os.path.normpath(os.path.join(base, a["file"]))
            if not os.path.isfile(study.template):
                raise StudyError(file, node.line, f"template scene '{a['file']}' not found ({study.template})")
            media = a.get("mediaDir")
            study.media_dir = os.path.normpath(os.path.join(base, media)) if media else os.path.dirname(study.template)
        elif node.tag == "Parameters":
            _attrs(node, file)
            for child in node.children:
                if child.tag == "Parameter":
                    factor = [_parameter(child, file)]
                elif child.tag == "Repeats":
                    factor = [_repeats(child, file)]
                elif child.tag == "Zip":
                    _attrs(child, file)
                    factor = []
                    for p in child.children:
                        if p.tag != "Parameter":
                            raise StudyError(file, p.line, f"<Zip> holds <Parameter> elements, not <{p.tag}>")
                        factor.append(_parameter(p, file))
                    if not factor:
                        raise StudyError(file, child.line, "<Zip> is empty")
                    n = len(factor[0].values)
                    for p in factor[1:]:
                        if len(p.values) != n:
                            raise StudyError(file, p.line, f"<Zip>: parameter '{p.name}' has {len(p.values)} "
                                                           f"values, '{factor[0].name}' has {n}")
                else:
                    raise StudyError(file, child.line, f"<Parameters>: unknown element <{child.tag}> "
                                                       f"({', '.join(ELEMENTS['Parameters'].children)})")
                for p in factor:
                    if p.name in names:
                        raise StudyError(file, p.line, f"parameter '{p.name}' already given on line {names[p.name]}")
                    names[p.name] = p.line
                study.factors.append(factor)
                study.parameters.extend(factor)
        elif node.tag == "Resources":
            a = _attrs(node, file)
            if "ranks" in a:
                study.ranks = _count(a["ranks"], file, node.line, "<Resources> ranks")
            if "wallTime" in a:
                study.wall_time = _wall_time(a["wallTime"], file, node.line)
            if "memory" in a:
                if not MEMORY_RE.match(a["memory"]):
                    raise StudyError(file, node.line, f"<Resources> memory '{a['memory']}': use e.g. 4G or 500M")
                study.memory = a["memory"]
            if "partition" in a and "queue" in a:
                raise StudyError(file, node.line, "<Resources>: partition and queue are the same; give one")
            study.partition = a.get("partition", a.get("queue"))
            study.account = a.get("account")
            if "maxConcurrent" in a:
                study.max_concurrent = _count(a["maxConcurrent"], file, node.line, "<Resources> maxConcurrent")
        elif node.tag == "Scheduler":
            a = _attrs(node, file)
            if a["type"] not in SCHEDULERS:
                raise StudyError(file, node.line, f"<Scheduler> type '{a['type']}' is not one of {', '.join(SCHEDULERS)}")
            study.scheduler = a["type"]
        elif node.tag == "PostProcess":
            _attrs(node, file)
            for c in node.children:
                if c.tag != "Command":
                    raise StudyError(file, c.line, f"<PostProcess> holds <Command> elements, not <{c.tag}>")
                _attrs(c, file)
                text = " ".join(c.text.split())
                if not text:
                    raise StudyError(file, c.line, "<Command> is empty")
                study.post_process.append((c.line, text))
        elif node.tag == "Summary":
            _attrs(node, file)
            for c in node.children:
                if c.tag != "Value":
                    raise StudyError(file, c.line, f"<Summary> holds <Value> elements, not <{c.tag}>")
                v = _summary_value(c, file)
                if v.name in names:
                    raise StudyError(file, c.line, f"'{v.name}' is already a parameter or value (line {names[v.name]})")
                names[v.name] = c.line
                study.summary.append(v)
        elif node.tag == "Plot":
            a = _attrs(node, file)
            study.plot = {"x": a["x"], "y": a["y"], "series": a.get("series"),
                          "file": a.get("file", f"{a['y']}_vs_{a['x']}.png"),
                          "logx": a.get("logx", "false") == "true", "logy": a.get("logy", "false") == "true",
                          "line": node.line}
        else:
            raise StudyError(file, node.line, f"unknown element <{node.tag}> "
                                              f"({', '.join(ELEMENTS['Study'].children)})")
    if study.template is None:
        raise StudyError(file, root.line, "<Study> needs a <Scene file=\"...\"/>")
    if not study.parameters:
        raise StudyError(file, root.line, "<Study> has no <Parameters> (nothing to vary)")
    if study.plot:
        columns = set(names) | RESERVED
        for key in ("x", "y", "series"):
            if study.plot[key] and study.plot[key] not in columns:
                raise StudyError(file, study.plot["line"], f"<Plot> {key}='{study.plot[key]}' is neither a "
                                                          "parameter nor a summary value")
    return study
