from gradcheck.cli import main

main(prog_name="gradcheck")
