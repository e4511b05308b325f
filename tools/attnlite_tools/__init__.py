"""attnlite's Python tools: the d2l reference modules, the safetensors reader/writer, the
greedy and beam search references, model export, quantization, ONNX export, fixtures and
training.  tools/README.md lists the modules and the scripts in tools/ that run them."""
