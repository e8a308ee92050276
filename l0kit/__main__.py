"`python -m l0kit ...`: the `l0kit` command (a plain module, not exported from a notebook: nbdev leaves files it did not write alone)."
import sys
from l0kit.cli.main import main

if __name__ == '__main__': sys.exit(main())
