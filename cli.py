"""Run the memengine CLI from a checkout: ``python cli.py …``."""

from memengine.cli import main

if __name__ == "__main__":
    main()
