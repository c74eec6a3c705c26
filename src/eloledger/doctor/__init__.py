"""The doctor: find misconfigured base URLs, keys and missing token usage before a run.

Entry points: :func:`eloledger.doctor.run.run_doctor` (everything, as ``eloledger doctor``),
:func:`eloledger.doctor.run.run_adhoc` (one URL), :func:`eloledger.doctor.urls.check_url`
(as-you-type), :func:`eloledger.doctor.effective.effective_settings` (what each client uses).
"""
