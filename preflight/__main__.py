from preflight.cli import main

main()
