"""Tests of experiments/ledger.py: each rule refuses a row that breaks it.

    python3 -m unittest discover -s experiments -p 'test_*.py'
"""
import contextlib
import io
import os
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ledger  # noqa: E402

CSV = "run,ftl,sim_seconds,label\n1,janus,100.0,a\n2,ppm,400.0,b\n3,fast,160.0,c\n"
PAPER = "Figure 6: total time. Fig. 7 shows copies. Table II lists chips.\n"
GOOD = """
paper = "004"
title = "A paper"

[[not_a_result]]
item = "Table II"
reason = "chip parameters, used as input"

[[row]]
id = "r6"
item = "Figure 6(b)"
claim = "PPM over Janus"
paper = "about four times"
paper_value = 4.0
value = "p / j"
ftlab = "4.00x"
status = "reproduced"
readme = "x/README.md"
[row.cells]
j = { csv = "x/out.csv", where = { run = "1" }, column = "sim_seconds" }
p = { csv = "x/out.csv", where = { ftl = "ppm" }, column = "sim_seconds" }

[[row]]
id = "r7"
item = "Figure 7"
claim = "ordering"
paper = "Janus best, PPM worst"
paper_order = "j < f < p"
ftlab = "j < f < p"
status = "reproduced"
readme = "x/README.md"
[row.cells]
j = { csv = "x/out.csv", where = { run = "1" }, column = "sim_seconds" }
p = { csv = "x/out.csv", where = { run = "2" }, column = "sim_seconds" }
f = { csv = "x/out.csv", where = { run = "3" }, column = "sim_seconds" }
"""


class LedgerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = self.tmp.name
        os.makedirs(os.path.join(root, "experiments", "ledger"))
        os.makedirs(os.path.join(root, "experiments", "x"))
        os.makedirs(os.path.join(root, "papers"))
        self.exp = os.path.join(root, "experiments")
        with open(os.path.join(self.exp, "x", "out.csv"), "w") as f:
            f.write(CSV)
        with open(os.path.join(self.exp, "x", "README.md"), "w") as f:
            f.write("# x\n")
        with open(os.path.join(root, "papers", "004_abc.txt"), "w") as f:
            f.write(PAPER)
        with open(os.path.join(self.exp, "README.md"), "w") as f:
            f.write(f"# e\n\n{ledger.BEGIN}\n{ledger.END}\n")
        self.saved = (ledger.HERE, ledger.LEDGER, ledger.README, os.environ.get("FTLAB_PAPERS"))
        ledger.HERE = self.exp
        ledger.LEDGER = os.path.join(self.exp, "ledger")
        ledger.README = os.path.join(self.exp, "README.md")
        os.environ["FTLAB_PAPERS"] = os.path.join(root, "papers")
        ledger._csv_cache.clear()

    def tearDown(self):
        ledger.HERE, ledger.LEDGER, ledger.README, papers = self.saved
        if papers is None:
            os.environ.pop("FTLAB_PAPERS", None)
        else:
            os.environ["FTLAB_PAPERS"] = papers
        ledger._csv_cache.clear()
        self.tmp.cleanup()

    def problems(self, toml):
        with open(os.path.join(self.exp, "ledger", "004.toml"), "w") as f:
            f.write(textwrap.dedent(toml))
        ledger._csv_cache.clear()
        problems, rows = ledger.check()
        return [p for p in problems if "stale" not in p], rows

    def assertRefused(self, toml, words):
        problems, _ = self.problems(toml)
        self.assertTrue(any(words in p for p in problems), f"expected {words!r} in {problems}")

    def test_good_ledger_passes_and_renders(self):
        problems, rows = self.problems(GOOD)
        self.assertEqual(problems, [])
        self.assertEqual(len(rows), 2)
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(ledger.main(["ledger.py", "render"]), 0)
            self.assertEqual(ledger.main(["ledger.py", "check"]), 0)
        with open(ledger.README) as f:
            text = f.read()
        self.assertIn("| Figure 6(b) | PPM over Janus | about four times | 4.00x | reproduced |", text)

    def test_stale_readme_is_refused(self):
        self.problems(GOOD)
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(ledger.main(["ledger.py", "check"]), 1)
        self.assertIn("the ledger section is stale", err.getvalue())

    def test_reproduced_beyond_a_quarter_is_refused(self):
        self.assertRefused(GOOD.replace("paper_value = 4.0", "paper_value = 5.5"), "from the paper's 5.5")

    def test_same_row_may_say_differs_with_a_cause(self):
        toml = GOOD.replace("paper_value = 4.0", "paper_value = 5.5").replace(
            'status = "reproduced"', 'status = "differs"\ncause = "measured"', 1)
        problems, _ = self.problems(toml)
        self.assertEqual(problems, [])

    def test_printed_value_must_be_what_the_cells_give(self):
        self.assertRefused(GOOD.replace('ftlab = "4.00x"', 'ftlab = "4.10x"'), "the cells give p / j = 4.0000")

    def test_ordering_must_hold_in_the_cells(self):
        self.assertRefused(GOOD.replace('ftlab = "j < f < p"', 'ftlab = "f < j < p"'), "is not <")

    def test_reproduced_ordering_must_be_the_papers(self):
        self.assertRefused(GOOD.replace('paper_order = "j < f < p"', 'paper_order = "p > j > f"'),
                           "is not the paper's")

    def test_reproduced_with_an_assumption_is_refused(self):
        self.assertRefused(GOOD.replace('ftlab = "4.00x"', 'ftlab = "4.00x"\nassumptions = ["t_e = 7 ms"]'),
                           "says reproduced but names assumptions")

    def test_assumption_needs_without(self):
        toml = GOOD.replace('ftlab = "4.00x"\nstatus = "reproduced"',
                            'ftlab = "4.00x"\nstatus = "assumption"\nassumptions = ["t_e = 7 ms"]')
        self.assertRefused(toml, "needs `without`")

    def test_cell_must_select_one_row(self):
        self.assertRefused(GOOD.replace('where = { ftl = "ppm" }', 'where = { ftl = "dftl" }'), "selects 0 rows")

    def test_cell_must_be_a_number(self):
        self.assertRefused(GOOD.replace('where = { run = "1" }, column = "sim_seconds" }\np', 'where = { run = "1" }, column = "label" }\np'),
                           "not a number")

    def test_every_table_and_figure_is_covered(self):
        toml = GOOD.replace('[[not_a_result]]\nitem = "Table II"\nreason = "chip parameters, used as input"\n', "")
        self.assertRefused(toml, "no row or [[not_a_result]] for Table II")

    def test_unknown_status_is_refused(self):
        self.assertRefused(GOOD.replace('status = "reproduced"', 'status = "matches"', 1), "is not one of")

    def test_reproduced_needs_something_to_check_against(self):
        self.assertRefused(GOOD.replace("paper_value = 4.0\n", ""), "gives nothing to check it against")

    def test_a_bound_is_checked(self):
        bound = GOOD.replace("paper_value = 4.0", 'paper_bound = ">= 3"')
        problems, _ = self.problems(bound)
        self.assertEqual(problems, [])
        self.assertRefused(bound.replace('">= 3"', '"< 3"'), "does not meet the paper's bound < 3")
        self.assertRefused(bound.replace('">= 3"', '"about 3"'), "write an operator and a number")
        self.assertRefused(bound.replace('paper_bound = ">= 3"', 'paper_bound = ">= 3"\npaper_value = 4.0'),
                           "not paper_value and paper_bound")


if __name__ == "__main__":
    unittest.main()
