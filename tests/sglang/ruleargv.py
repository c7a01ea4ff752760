"""The argv pieces the rule-table tests build their cases from: models of each kind, and the speculative
and mamba flags the rules read."""

H = ["--model-path", "Qwen/Qwen3.6-27B"]  # hybrid GDN: Qwen3_5ForConditionalGeneration
Q = ["--model-path", "Qwen/Qwen3-8B"]  # dense
L = ["--model-path", "meta-llama/Llama-3.1-8B"]  # Llama: its own automatic speculative parameters
DS = ["--model-path", "deepseek-ai/DeepSeek-V3"]  # MLA
X11 = ["--mamba-scheduler-strategy", "extra_buffer"]
X23 = ["--mamba-radix-cache-strategy", "extra_buffer"]
NB23 = ["--mamba-radix-cache-strategy", "no_buffer"]
E = ["--speculative-algorithm", "EAGLE"]
S314 = [
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
]
T4 = ["--speculative-num-steps", "3", "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"]
NG = ["--speculative-algorithm", "NGRAM"]
DF = ["--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "d"]
CORPUS = ["--speculative-ngram-external-corpus-path", "c.txt"]
NOOV = ["--disable-overlap-schedule"]
