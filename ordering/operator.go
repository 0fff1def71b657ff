package ordering

import (
	"bytes"
	"context"

	"companydocs"

	bolt "go.etcd.io/bbolt"
)

// OperatorOrders lists the orders of every account for an operator,
// oldest first (the queue), optionally only those in status. Each order
// carries its Account.
func (s *Service) OperatorOrders(ctx context.Context, operator, status, cursor string, limit int) ([]*companydocs.Order, string, error) {
	return s.ordersPage(operator, companydocs.RoleOperator, status, cursor, limit, func(tx *bolt.Tx, after string, limit int) ([]*companydocs.Order, string, error) {
		return queue(tx, status, after, limit)
	})
}

// queue walks the orders oldest first: the orders bucket (ids sort by
// time) or, for one status, the status index.
func queue(tx *bolt.Tx, status, after string, limit int) ([]*companydocs.Order, string, error) {
	c := tx.Bucket(bucketOrders).Cursor()
	prefix := []byte{}
	if status != "" {
		c = tx.Bucket(bucketOrderStatus).Cursor()
		prefix = key(status, "")
	}
	k, _ := c.Seek(append(bytes.Clone(prefix), after...))
	if after != "" && k != nil && bytes.Equal(k, append(bytes.Clone(prefix), after...)) {
		k, _ = c.Next()
	}
	orders := []*companydocs.Order{}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(orders) == limit {
			return orders, encodeCursor(orders[limit-1].ID), nil
		}
		rec, err := getOrder(tx, string(k[len(prefix):]))
		if err != nil {
			return nil, "", err
		}
		orders = append(orders, rec.order())
	}
	return orders, "", nil
}

// OperatorOrder shows any order to an operator, with its Account.
func (s *Service) OperatorOrder(ctx context.Context, operator, id string) (*companydocs.Order, error) {
	if err := s.requireRole(operator, companydocs.RoleOperator); err != nil {
		return nil, err
	}
	var out *companydocs.Order
	err := s.db.View(func(tx *bolt.Tx) error {
		rec, err := getOrder(tx, id)
		if err == nil {
			out = rec.order()
		}
		return err
	})
	return out, err
}
