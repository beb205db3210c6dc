"""``python -m memengine`` runs the CLI."""

from memengine.cli import main

main()
