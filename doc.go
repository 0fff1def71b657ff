// Package companydocs holds the domain of the service: register references,
// courts, LEIs, company names and legal forms, profiles, candidates, plans and
// orders. It depends on the standard library and golang.org/x/text (Unicode
// normalisation for folding names) only; every other package of the module
// imports it.
package companydocs

// MetricsNamespace prefixes every Prometheus metric of the service, the
// HTTP collectors (httpapi) and the others (metrics) alike.
const MetricsNamespace = "companydocs"
