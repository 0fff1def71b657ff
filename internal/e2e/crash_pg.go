package e2e

import (
	"context"
	"fmt"
	"testing"

	"companydocs"
	"companydocs/ordering"
	"companydocs/postgres"
)

// CrashCreateAccountsIn creates the crash test's accounts in the
// PostgreSQL database and returns their API keys.
func CrashCreateAccountsIn(tb testing.TB, url string) map[string]string {
	tb.Helper()
	db, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	svc := ordering.NewAccounts(db, ordering.Options{SweepInterval: -1})
	defer svc.Close()
	keys := map[string]string{}
	for i := range CrashAccounts {
		name := fmt.Sprintf("crash-%d", i)
		if keys[name], err = svc.CreateAccount(name, CrashCredits); err != nil {
			tb.Fatal(err)
		}
	}
	if keys[CrashOperator], err = svc.CreateAccountWithRole(CrashOperator, companydocs.RoleOperator, 0); err != nil {
		tb.Fatal(err)
	}
	return keys
}
