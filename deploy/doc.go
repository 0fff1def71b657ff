// Package deploy holds the files a deployment uses beside the binary:
// debian/ (the Debian package's unit, settings file and maintainer
// scripts, packaged by make deb) and prometheus/ (the alerting rules and
// their tests). Its test runs docs/deploy.md, the deployment guide, step
// by step against a throw-away PostgreSQL and SeaweedFS, so that the
// guide's commands stay true.
package deploy
