"""Checks of what deploys Shoal (deploy/helm, deploy/compose, deploy/docker), run by
deploy/local/check-deploy.py as part of `make test`."""
