"""Chat over a person's documents: the pure parts.

- ``memory``: chat sessions as plain JSON data, and the history a model sees.
- ``answer``: retrieval hits -> numbered context, citations, prompt; citation
  markers in the model's text.
- ``extractive``: the answer without a model (top passages, highlighted).
- ``doctools``: the document tools the agent may call.

Nothing here touches the network or ``js``; the worker wires clients in.
"""
