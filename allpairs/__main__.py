"""``python -m allpairs`` runs the command line."""
from .cli import main

main()
