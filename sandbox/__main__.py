from sandbox.main import main

main()
