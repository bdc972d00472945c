"""python -m perfgate ...: the same as the `perfgate` command."""
from ._launcher import main

main()
