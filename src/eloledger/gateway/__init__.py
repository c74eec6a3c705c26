"""What eloledger knows about gateways, shared by the doctor, the runner and the meter.

``wire`` reads token usage and the answering model from OpenAI, Anthropic and Gemini answers;
``answers`` reads server-sent events, model lists and error bodies; ``error_kinds`` says what
an error answer means from its body as well as its status (quota, a refused key, a missing
model, an upstream's fault); ``causes`` names one cause and its fix for a failed answer, so the
probe and a run say the same thing; ``neterrors`` tells TLS and DNS failures apart.
"""
