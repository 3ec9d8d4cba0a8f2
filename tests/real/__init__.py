"""The real-server tier (llama-server + Gemma 3 270M); see conftest.py."""
