from zkafka.cli import main

main(prog_name="zkafka")
