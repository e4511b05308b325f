"""Write a base-size d2l Transformer with random weights as an attnlite model file.

    /usr/bin/python3 tools/make_random_model.py OUT.safetensors [--seed 0]
        [--num-hiddens 512] [--num-layers 6] [--num-heads 8] [--ffn 2048]
        [--vocab 32000] [--num-steps 20]

Code: tools/attnlite_tools/random_model.py, main().
"""
from attnlite_tools.random_model import main

if __name__ == "__main__":
    main()
