"""What the plotting scripts share: the command line (CSV PNG [--title]), the
CSV's rows, and matplotlib without a display."""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported for the scripts)


def read_args_and_rows(doc):
    """Parses CSV PNG [--title TEXT]; returns the arguments and the CSV's rows as dicts."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("png")
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    with open(args.csv, newline="") as f:
        return args, list(csv.DictReader(f))
