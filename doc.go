// Package companydocs holds the domain of the service: company
// profiles, candidates, changes, gaps, plans and orders, error codes and the
// limits on what clients send. It stands on two packages of the domain
// beside it: register (register references, courts, LEIs, legal forms)
// and textfold (folding names, phonetics, typos, line breaks); besides them
// it depends on the standard library, golang.org/x/text (through textfold)
// and the message catalog only. Every other package of the module imports it.
package companydocs

// MetricsNamespace prefixes every Prometheus metric of the service, the
// HTTP collectors (httpapi) and the others (metrics) alike.
const MetricsNamespace = "companydocs"
