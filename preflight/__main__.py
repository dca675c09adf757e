from preflight.cli import console_main

console_main()
