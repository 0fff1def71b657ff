package ordering

import (
	"context"

	"companydocs"
)

// OperatorOrders lists the orders of every account for an operator,
// oldest first (the queue), optionally only those in status. Each order
// carries its Account.
func (s *Orders) OperatorOrders(ctx context.Context, operator, status, cursor string, limit int) ([]*companydocs.Order, string, error) {
	return s.ordersPage(ctx, operator, companydocs.RoleOperator, status, cursor, limit, func(tx Tx, after string, limit int) ([]*OrderRecord, error) {
		return tx.QueuedOrders(status, after, limit)
	})
}

// OperatorOrder shows any order to an operator, with its Account.
func (s *Orders) OperatorOrder(ctx context.Context, operator, id string) (*companydocs.Order, error) {
	if err := s.requireRole(operator, companydocs.RoleOperator); err != nil {
		return nil, err
	}
	var out *companydocs.Order
	err := s.store.View(ctx, func(tx Tx) error {
		rec, err := getOrder(tx, id)
		if err == nil {
			out = rec.orderFor(companydocs.RoleOperator)
		}
		return err
	})
	return out, err
}
