from ._demo import main

main()
