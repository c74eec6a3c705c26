"""Judges: score one sample (rule, tests), compare two (LLM pairwise), rank arms within a task.

Scoring of an arm on a task (one session), written to the results file and expanded into the
comparisons file:

- ``single``: the score of its one sample;
- ``best_of_n`` with ``select = "verifier"``: the best score among its samples (the task's
  own rule/tests judge is the verifier, so this is pass@n when scores are 0/1);
- ``best_of_n`` with ``select = "judge"``: the score of the sample an LLM judge picks in a
  knockout (each match judged in both orders);
- ``self_consistency``: the score of the majority answer among the extracted answers.

An arm with no successful sample on a task (every call failed) is left out of that task's
comparisons: a gateway failure is not the model's loss.
"""
