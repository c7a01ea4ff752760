"""`python -m gdnconsole`: the same as the `gdnconsole` executable."""

from gdnconsole.entry import main

if __name__ == "__main__":
    main()
