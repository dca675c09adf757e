from preflight.early import main

main()
