import os
import sys
from pathlib import Path


def load_config(path):
    return Path(path).read_text(encoding="utf-8")


def main():
    config = load_config(os.environ.get("APP_CONFIG", "config.ini"))
    print("starting with", config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
