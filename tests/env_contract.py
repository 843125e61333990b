"""The env an InferenceEndpointConfig carries for each algorithm and engine, written by hand.

Shared by the endpoint-component matrix and the `mlcc plan` end-to-end test.
"""

from __future__ import annotations

DRAFT = "org/draft"
# For every algorithm at the default 5 tokens (the serve wrapper reads these variables).
SPECULATIVE_ENV = {
    "draft-model": {
        "SM_VLLM_SPECULATIVE_CONFIG": (
            '{"method":"draft_model","model":"org/draft","num_speculative_tokens":5}'
        ),
        "SM_SGLANG_SPECULATIVE_ALGORITHM": "STANDALONE",
        "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH": DRAFT,
        "SM_SGLANG_SPECULATIVE_NUM_STEPS": "5",
        "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "1",
        "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "6",
    },
    "eagle": {
        "SM_VLLM_SPECULATIVE_CONFIG": (
            '{"method":"eagle","model":"org/draft","num_speculative_tokens":5}'
        ),
        "SM_SGLANG_SPECULATIVE_ALGORITHM": "EAGLE",
        "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH": DRAFT,
        "SM_SGLANG_SPECULATIVE_NUM_STEPS": "5",
        "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "1",
        "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "6",
    },
    "eagle2": {
        "SM_VLLM_SPECULATIVE_CONFIG": (
            '{"method":"eagle","model":"org/draft","num_speculative_tokens":5}'
        ),
        "SM_SGLANG_SPECULATIVE_ALGORITHM": "EAGLE",
        "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH": DRAFT,
        "SM_SGLANG_SPECULATIVE_NUM_STEPS": "5",
        "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "4",
        "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "8",
    },
    "eagle3": {
        "SM_VLLM_SPECULATIVE_CONFIG": (
            '{"method":"eagle3","model":"org/draft","num_speculative_tokens":5}'
        ),
        "SM_SGLANG_SPECULATIVE_ALGORITHM": "EAGLE3",
        "SM_SGLANG_SPECULATIVE_DRAFT_MODEL_PATH": DRAFT,
        "SM_SGLANG_SPECULATIVE_NUM_STEPS": "5",
        "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "1",
        "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "6",
    },
    "ngram": {
        "SM_VLLM_SPECULATIVE_CONFIG": ('{"method":"ngram","num_speculative_tokens":5}'),
        "SM_SGLANG_SPECULATIVE_ALGORITHM": "NGRAM",
        "SM_SGLANG_SPECULATIVE_NUM_STEPS": "5",
        "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "1",
        "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "6",
    },
    "mtp": {
        "SM_VLLM_SPECULATIVE_CONFIG": ('{"method":"mtp","num_speculative_tokens":5}'),
        "SM_SGLANG_SPECULATIVE_ALGORITHM": "NEXTN",
        "SM_SGLANG_SPECULATIVE_NUM_STEPS": "5",
        "SM_SGLANG_SPECULATIVE_EAGLE_TOPK": "1",
        "SM_SGLANG_SPECULATIVE_NUM_DRAFT_TOKENS": "6",
    },
}
ENGINE_SETTINGS = {
    "vllm": {
        "SM_VLLM_MODEL": "meta-llama/Llama-3.1-8B-Instruct",
        "SM_VLLM_SERVED_MODEL_NAME": "meta-llama/Llama-3.1-8B-Instruct",
        "SM_VLLM_TENSOR_PARALLEL_SIZE": "4",
        "SM_VLLM_MAX_MODEL_LEN": "8192",
    },
    "sglang": {
        "SM_SGLANG_MODEL_PATH": "meta-llama/Llama-3.1-8B-Instruct",
        "SM_SGLANG_SERVED_MODEL_NAME": "meta-llama/Llama-3.1-8B-Instruct",
        "SM_SGLANG_TP_SIZE": "4",
        "SM_SGLANG_ENABLE_METRICS": "true",  # SGLang serves /metrics only when asked
        "SM_SGLANG_CONTEXT_LENGTH": "8192",
    },
}
