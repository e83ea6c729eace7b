# SPDX-License-Identifier: MIT
"""The elements and attributes of study files, written once.

The study reader (study.py) takes the allowed and required attributes of every element and the
children of every element from ELEMENTS; schemas/study.xsd is generated from the same table:

    /usr/bin/python3 tools/grain_study/study_format.py xsd schemas/study.xsd

(or `cmake --build <build dir> --target study-schema`); a test fails when the committed schema
differs from the table. The value checks with their messages stay in the reader; the schema
states the same rules as far as XSD 1.0 can (docs/studies.md, "Schema").

This module uses nothing but the standard library and no other module of grain_study, so that
it runs as a script.
"""

import re
import sys

# Names of parameters and placeholders: ${name} in the template. ':' and '.' are allowed so
# that GRSF templates (${RigidBodySim:firstInitialCondSimFile}) can be filled.
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_:.-]*$")
STUDY_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
WALL_TIME_RE = re.compile(r"^(\d+-)?\d+(:\d\d){0,2}$")
MEMORY_RE = re.compile(r"^\d+(\.\d+)?[KMGT]?B?$", re.IGNORECASE)
BODY_RE = re.compile(r"^(\d+):(\d+)$")

SCHEDULERS = ("slurm", "pbs", "torque", "shell")
REDUCERS = ("last", "first", "min", "max", "mean")
BODY_QUANTITIES = ("x", "y", "z", "dx", "dy", "dz", "distance", "speed")
BOOLEANS = ("true", "false")


class Type:
    """A value type of the schema: an XSD simpleType body (restriction or list) and its text."""

    def __init__(self, name, doc, body):
        self.name = name
        self.doc = doc
        self.body = body


def _enumeration(values):
    return ('<xs:restriction base="xs:string">'
            + "".join(f'<xs:enumeration value="{v}"/>' for v in values) + "</xs:restriction>")


def _pattern(base, pattern):
    return f'<xs:restriction base="{base}"><xs:pattern value="{pattern}"/></xs:restriction>'


TYPES = {t.name: t for t in (
    Type("text", "any text", '<xs:restriction base="xs:string"/>'),
    Type("nonEmpty", "text that is not only white space", _pattern("xs:string", r".*\S.*")),
    Type("name", "a column and placeholder name: a letter or '_', then letters, digits, '_', ':', "
                 "'.', '-'", _pattern("xs:string", r"[A-Za-z_][A-Za-z0-9_:.\-]*")),
    Type("studyName", "letters, digits, '_', '.', '-' (the job name of the scheduler)",
         _pattern("xs:string", r"[A-Za-z0-9_.\-]+")),
    Type("valueList", "values separated by white space, at least one",
         '<xs:restriction><xs:simpleType><xs:list itemType="xs:string"/></xs:simpleType>'
         '<xs:minLength value="1"/></xs:restriction>'),
    Type("range", "FROM TO COUNT: two numbers and a whole number",
         _pattern("xs:string", r"\s*\S+\s+\S+\s+[+\-]?[0-9]+\s*")),
    Type("count", "a whole number >= 1", '<xs:restriction base="xs:positiveInteger"/>'),
    Type("integer", "a whole number", '<xs:restriction base="xs:integer"/>'),
    Type("wallTime", "[D-]HH:MM:SS, [D-]HH:MM or [D-]HH", _pattern("xs:string", r"([0-9]+-)?[0-9]+(:[0-9][0-9]){0,2}")),
    Type("memory", "a size such as 4G, 500M or 1.5GB",
         _pattern("xs:string", r"[0-9]+(\.[0-9]+)?[KMGTkmgt]?[Bb]?")),
    Type("body", "GROUP:NUMBER of a body, e.g. 0:0", _pattern("xs:string", r"[0-9]+:[0-9]+")),
    Type("scheduler", ", ".join(SCHEDULERS), _enumeration(SCHEDULERS)),
    Type("reducer", ", ".join(REDUCERS), _enumeration(REDUCERS)),
    Type("quantity", ", ".join(BODY_QUANTITIES), _enumeration(BODY_QUANTITIES)),
    Type("boolean", "true or false", _enumeration(BOOLEANS)),
)}


class Attribute:
    def __init__(self, name, type, doc, required=False):
        assert type in TYPES, type
        self.name = name
        self.type = type
        self.doc = doc
        self.required = required


class Element:
    """An element: its attributes, the elements it holds (any order, any number unless
    `at_least_one`) and whether its content is text."""

    def __init__(self, name, doc, attributes=(), children=(), text=False, at_least_one=False):
        self.name = name
        self.doc = doc
        self.attributes = {a.name: a for a in attributes}
        self.children = tuple(children)
        self.text = text
        self.at_least_one = at_least_one

    @property
    def required(self):
        return tuple(a.name for a in self.attributes.values() if a.required)


A = Attribute
ELEMENTS = {e.name: e for e in (
    Element("Study", "a parameter study: one template scene, the varied parameters, how the runs "
                     "are run and collected",
            [A("name", "studyName", "the study's name, job name of the scripts (default: the file "
                                    "name up to its first '.')")],
            ["Scene", "Parameters", "Resources", "Scheduler", "PostProcess", "Summary", "Plot"]),
    Element("Scene", "the template scene",
            [A("file", "nonEmpty", "the template scene, relative to the study file", required=True),
             A("mediaDir", "text", "base folder of relative mesh paths (default: the template's folder)")]),
    Element("Parameters", "the varied quantities, in table order", [], ["Parameter", "Zip", "Repeats"]),
    Element("Parameter", "one varied quantity: give exactly one of values, linspace, logspace",
            [A("name", "name", "column name, and ${name} in the template", required=True),
             A("set", "nonEmpty", "XPath of grain-sim --set that the value goes to (without it: "
                                  "the ${name} placeholder)"),
             A("values", "valueList", "the values"),
             A("linspace", "range", "COUNT evenly spaced values from FROM to TO"),
             A("logspace", "range", "COUNT values from FROM to TO (both > 0), evenly spaced in log10")]),
    Element("Zip", "parameters of equal length, varied together (value k of each in run k)", [],
            ["Parameter"], at_least_one=True),
    Element("Repeats", "count repeats with the seeds firstSeed, firstSeed + 1, ...",
            [A("count", "count", "number of repeats", required=True),
             A("name", "name", "column name of the seed (default seed)"),
             A("firstSeed", "integer", "the first seed (default 1)"),
             A("set", "nonEmpty", "XPath of grain-sim --set that the seed goes to")]),
    Element("Resources", "what each run asks the scheduler for",
            [A("ranks", "count", "MPI processes of a run (default 1; more runs grain-sim-mpi)"),
             A("wallTime", "wallTime", "wall-time limit of a run, [D-]HH:MM:SS"),
             A("memory", "memory", "memory of a run, e.g. 4G or 500M"),
             A("partition", "text", "the scheduler's partition (or queue; give one of the two)"),
             A("queue", "text", "the same as partition"),
             A("account", "text", "account charged"),
             A("maxConcurrent", "count", "runs at a time (array throttle)")]),
    Element("Scheduler", "the job script written",
            [A("type", "scheduler", "slurm, pbs (PBS Pro), torque or shell (the default without "
                                    "this element)", required=True)]),
    Element("PostProcess", "commands run in the run folder after the simulation", [], ["Command"]),
    Element("Command", "one post-processing command ({sim}, {record}, {scene}, {simdata}, {run}, "
                       "{study} and {parameter} are replaced)", [], text=True),
    Element("Summary", "values collected per run into the table", [], ["Value"]),
    Element("Value", "one summary value: body= (with quantity=), or file= with column= or comment=",
            [A("name", "name", "column name", required=True),
             A("file", "nonEmpty", "a CSV or tab-separated file of the run folder ({record}: the "
                                   "record folder)"),
             A("column", "text", "column of file"),
             A("reduce", "reducer", "how the column becomes one value (default last)"),
             A("comment", "text", "key of a '# key = value' line of file"),
             A("body", "body", "a body of the .sim file, GROUP:NUMBER"),
             A("quantity", "quantity", "what of the body (default distance: from the first to the "
                                       "last state)")]),
    Element("Plot", "the plot of collect",
            [A("x", "text", "parameter on the x axis", required=True),
             A("y", "text", "value on the y axis", required=True),
             A("series", "text", "parameter with one line per value"),
             A("file", "nonEmpty", "PNG file (default Y_vs_X.png)"),
             A("logx", "boolean", "logarithmic x axis"),
             A("logy", "boolean", "logarithmic y axis")]),
)}
ROOT = "Study"


def _escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _doc(text, indent):
    return f"{indent}<xs:annotation><xs:documentation>{_escape(text)}</xs:documentation></xs:annotation>"


def xsd():
    """The text of schemas/study.xsd."""
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        "<!-- XML schema (XSD 1.0) of grain's study files (tools/grain-study). Generated by",
        "     `tools/grain_study/study_format.py xsd` from the table the study reader uses; do not",
        "     edit. Reference: docs/studies.md. -->",
        '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">',
        "",
        f'  <xs:element name="{ROOT}" type="{ROOT}"/>',
        "",
        "  <!-- Value types -->",
    ]
    for t in TYPES.values():
        out += [f'  <xs:simpleType name="{t.name}Type">', _doc(t.doc, "    "), f"    {t.body}",
                "  </xs:simpleType>"]
    out += ["", "  <!-- Elements -->"]
    for e in ELEMENTS.values():
        out.append(f'  <xs:complexType name="{e.name}">')
        out.append(_doc(e.doc, "    "))
        if e.text:
            out += ['    <xs:simpleContent>', '      <xs:extension base="xs:string">']
            indent = "        "
        else:
            indent = "    "
            if e.children:
                least = "1" if e.at_least_one else "0"
                out.append(f'    <xs:choice minOccurs="{least}" maxOccurs="unbounded">')
                out += [f'      <xs:element name="{c}" type="{c}"/>' for c in e.children]
                out.append("    </xs:choice>")
        for a in e.attributes.values():
            use = ' use="required"' if a.required else ""
            out += [f'{indent}<xs:attribute name="{a.name}" type="{a.type}Type"{use}>', _doc(a.doc, indent + "  "),
                    f"{indent}</xs:attribute>"]
        if e.text:
            out += ["      </xs:extension>", "    </xs:simpleContent>"]
        out.append("  </xs:complexType>")
    out += ["</xs:schema>", ""]
    return "\n".join(out)


def main(argv):
    if len(argv) not in (2, 3) or argv[1] != "xsd":
        sys.stderr.write("usage: study_format.py xsd [OUTPUT]   the XML schema of study files\n")
        return 2
    text = xsd()
    if len(argv) == 2:
        sys.stdout.write(text)
    else:
        with open(argv[2], "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
