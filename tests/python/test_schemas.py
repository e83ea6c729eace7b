#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The XML schemas of schemas/ against the repository's XML files and the study reader.

    /usr/bin/python3 tests/python/test_schemas.py [TestClass]

StudySchema: schemas/study.xsd is what tools/grain_study/study_format.py generates from the
table the study reader uses, and the reader and the schema (checked with xmllint from
libxml2-utils) accept and refuse the same attributes and elements. XmlFiles: every XML file
under scenes/ (and the scenes and studies of validation/, bench/scenes/ and tests/study/)
validates against the schema of its root element. Without xmllint the xmllint tests are
skipped with "xmllint not found" (ctest reports them as skipped).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))

from grain_study import study_format  # noqa: E402
from grain_study.study import StudyError, read_study  # noqa: E402

SCENE_XSD = os.path.join(ROOT, "schemas", "scene.xsd")
STUDY_XSD = os.path.join(ROOT, "schemas", "study.xsd")
# Root element (with its namespace, as ElementTree names it) -> schema.
SCHEMAS = {"{SceneFile}DynamicsSystem": SCENE_XSD, "Study": STUDY_XSD}

needs_xmllint = unittest.skipIf(shutil.which("xmllint") is None,
                                "xmllint not found (Debian: apt-get install libxml2-utils, "
                                "which tools/install-deps.sh installs)")


def xmllint(schema, path):
    """(exit code, output) of xmllint --noout --schema SCHEMA PATH (parser warnings off: the
    scene namespace URI "SceneFile" is relative, which libxml2 warns about)."""
    r = subprocess.run(["xmllint", "--nowarning", "--noout", "--schema", schema, path],
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


class StudySchema(unittest.TestCase):
    def test_committed_schema_is_generated(self):
        with open(STUDY_XSD, encoding="utf-8") as f:
            self.assertTrue(f.read() == study_format.xsd(),
                            "schemas/study.xsd differs from the table of tools/grain_study/study_format.py; "
                            "regenerate with: /usr/bin/python3 tools/grain_study/study_format.py xsd "
                            "schemas/study.xsd (or cmake --build <build dir> --target study-schema)")

    def test_the_studies_use_every_element_and_attribute_of_the_table(self):
        used = element_attributes(FULL) | element_attributes(QUEUE)
        table = {(e.name, a) for e in study_format.ELEMENTS.values() for a in e.attributes}
        self.assertEqual(used, table)
        tags = {e.tag for e in ET.fromstring(FULL.encode()).iter()}
        self.assertEqual(tags, set(study_format.ELEMENTS))


# A study with every element and, over FULL and its QUEUE variant, every attribute of the table.
FULL = """<?xml version="1.0" encoding="UTF-8"?>
<Study name="every_attribute">
  <Scene file="template.xml" mediaDir="."/>
  <Parameters>
    <Parameter name="mu" set="SceneSettings/ContactParameterMap/ContactParameterStandard/@mu" values="0.1 0.3"/>
    <Parameter name="dt" linspace="0.001 0.002 2"/>
    <Zip>
      <Parameter name="k" logspace="1 100 3"/>
      <Parameter name="label" values="a b c"/>
    </Zip>
    <Repeats count="2" name="seed" firstSeed="5" set="SceneObjects/RigidBodies/@seed"/>
  </Parameters>
  <Resources ranks="2" wallTime="1-02:00:00" memory="1.5GB" partition="short" account="grain"
             maxConcurrent="4"/>
  <Scheduler type="torque"/>
  <PostProcess>
    <Command>grain-convert analyze contacts {simdata} -o contacts.csv</Command>
  </PostProcess>
  <Summary>
    <Value name="distance" body="0:0" quantity="dx"/>
    <Value name="contacts" file="contacts.csv" column="contacts_max" reduce="mean"/>
    <Value name="duration" file="{record}/crossing.csv" comment="flow_duration"/>
  </Summary>
  <Plot x="mu" y="distance" series="dt" file="d.png" logx="true" logy="false"/>
</Study>
"""
QUEUE = FULL.replace('partition="short"', 'queue="short"')


def element_attributes(text):
    """{(element, attribute)} of an XML text."""
    return {(e.tag, a) for e in ET.fromstring(text.encode()).iter() for a in e.attrib}


def with_attribute(text, element, attribute, value):
    """text with attribute="value" added to the first <element ...>."""
    m = re.search(rf"<{element}(?=[\s/>])", text)
    return text[:m.end()] + f' {attribute}="{value}"' + text[m.end():]


def without_attribute(text, element, attribute):
    """text without the attribute of the first <element ...> that has it."""
    for m in re.finditer(rf"<{element}\s[^>]*>", text):
        tag = re.sub(rf'\s{attribute}="[^"]*"', "", m.group(0), count=1)
        if tag != m.group(0):
            return text[:m.start()] + tag + text[m.end():]
    raise AssertionError(f"no <{element} {attribute}=...> in the study")


@needs_xmllint
class StudyReaderAndSchema(unittest.TestCase):
    """The reader (tools/grain_study/study.py) and schemas/study.xsd agree on what is allowed."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="grain_schema_test_")
        with open(os.path.join(self.tmp, "template.xml"), "w") as f:
            f.write("<DynamicsSystem/>\n")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def both(self, text):
        """(reader's error or None, (xmllint exit code, output)) of a study text."""
        path = os.path.join(self.tmp, "study.xml")
        with open(path, "w") as f:
            f.write(text)
        try:
            read_study(path)
            error = None
        except StudyError as e:
            error = str(e)
        return error, xmllint(STUDY_XSD, path)

    def assert_both_accept(self, text):
        error, (code, output) = self.both(text)
        self.assertIsNone(error)
        self.assertEqual(code, 0, output)

    def assert_both_refuse(self, text, reader_message):
        error, (code, output) = self.both(text)
        self.assertIsNotNone(error, "the reader accepts it")
        self.assertIn(reader_message, error)
        self.assertNotEqual(code, 0, "the schema accepts it")

    def test_both_accept_every_attribute(self):
        self.assert_both_accept(FULL)
        self.assert_both_accept(QUEUE)

    def test_both_refuse_an_unknown_attribute_on_every_element(self):
        for element in study_format.ELEMENTS:
            with self.subTest(element=element):
                self.assert_both_refuse(with_attribute(FULL, element, "bogus", "1"),
                                        f"<{element}>: unknown attribute 'bogus'")

    def test_both_refuse_a_missing_required_attribute(self):
        for e in study_format.ELEMENTS.values():
            for attribute in e.required:
                with self.subTest(element=e.name, attribute=attribute):
                    self.assert_both_refuse(without_attribute(FULL, e.name, attribute),
                                            f"<{e.name}>: missing attribute '{attribute}'")

    def test_both_refuse_an_unknown_element_in_every_container(self):
        for e in study_format.ELEMENTS.values():
            if not e.children:
                continue
            with self.subTest(element=e.name):
                m = re.search(rf"<{e.name}(\s[^>]*)?>", FULL)
                text = FULL[:m.end()] + "<Bogus/>" + FULL[m.end():]
                self.assert_both_refuse(text, "<Bogus>")

    def test_both_refuse_bad_values(self):
        cases = [
            (('<Scheduler type="torque"/>', '<Scheduler type="lsf"/>'), "type 'lsf' is not one of"),
            (('reduce="mean"', 'reduce="median"'), "reduce 'median' is not one of"),
            (('quantity="dx"', 'quantity="angle"'), "quantity 'angle' is not one of"),
            (('body="0:0"', 'body="0"'), "must be GROUP:NUMBER"),
            (('wallTime="1-02:00:00"', 'wallTime="2h"'), "wallTime '2h'"),
            (('memory="1.5GB"', 'memory="lots"'), "memory 'lots'"),
            (('ranks="2"', 'ranks="0"'), "the range is empty"),
            (('count="2"', 'count="two"'), "'two' is not a whole number"),
            (('name="mu"', 'name="1mu"'), "parameter name '1mu'"),
            (('name="every_attribute"', 'name="every attribute"'), "study name 'every attribute'"),
            (('linspace="0.001 0.002 2"', 'linspace="0.001 0.002"'), "expected 'FROM TO COUNT'"),
            (('values="0.1 0.3"', 'values=" "'), "the list is empty"),
        ]
        for (old, new), message in cases:
            with self.subTest(value=new):
                self.assertIn(old, FULL)
                self.assert_both_refuse(FULL.replace(old, new, 1), message)


def repository_xml_files():
    """Every XML file under scenes/, validation/ and bench/scenes/, and tests/study/'s files."""
    files = []
    for folder in ("scenes", "validation", os.path.join("bench", "scenes"), os.path.join("tests", "study")):
        for base, _, names in os.walk(os.path.join(ROOT, folder)):
            files += [os.path.join(base, n) for n in names if n.endswith(".xml")]
    return sorted(files)


@needs_xmllint
class XmlFiles(unittest.TestCase):
    def test_every_file_validates_against_the_schema_of_its_root(self):
        files = repository_xml_files()
        in_scenes = [f for f in files if f.startswith(os.path.join(ROOT, "scenes") + os.sep)]
        self.assertGreater(len(in_scenes), 5)
        self.assertIn(os.path.join(ROOT, "scenes", "studies", "chute_mu.study.xml"), in_scenes)
        checked = {SCENE_XSD: 0, STUDY_XSD: 0}
        for path in files:
            rel = os.path.relpath(path, ROOT)
            with self.subTest(file=rel):
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                if "${" in text and path not in in_scenes:
                    # A study's template scene: it validates once its placeholders are filled
                    # (grain-study generate loads every expanded scene with the scene reader).
                    continue
                root = ET.fromstring(text.encode()).tag
                self.assertIn(root, SCHEMAS, f"{rel}: no schema for the root element {root}")
                code, output = xmllint(SCHEMAS[root], path)
                self.assertEqual(code, 0, output)
                checked[SCHEMAS[root]] += 1
        self.assertGreater(checked[SCENE_XSD], 5)
        self.assertGreater(checked[STUDY_XSD], 3)


if __name__ == "__main__":
    unittest.main(verbosity=2)
