"""`python -m gpudoctor`."""

from gpudoctor.cli import main

if __name__ == "__main__":
    main()
