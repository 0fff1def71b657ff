package httpapi

// The handlers are grouped by the resource they serve, each group a type
// of its own over the Server, so that the Server keeps what every route
// shares (configuration, limits, authentication, errors, logging) and a
// resource's handlers read together. routes builds one of each.
type (
	// orderHandlers serve the orders, their lifecycle, their documents
	// and the payment providers' events.
	orderHandlers struct{ s *Server }
	// webhookHandlers serve an account's webhook endpoints.
	webhookHandlers struct{ s *Server }
	// watchHandlers serve an account's watches.
	watchHandlers struct{ s *Server }
	// reconcileHandlers serve the W3C Reconciliation API.
	reconcileHandlers struct{ s *Server }
	// sessionHandlers serve sessions and the session's account.
	sessionHandlers struct{ s *Server }
	// batchHandlers serve the batch of searches.
	batchHandlers struct{ s *Server }
)
