"""Batch mode: a job's pending rows through the OpenAI Batch API at the batch price.

``client`` makes the HTTP calls, ``driver`` submits a job's rows and collects a batch's
results, ``tasks`` runs both on Celery (polling until the provider is done). See
docs/batch-mode.md.
"""
