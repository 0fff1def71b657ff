//go:build !race

package docs

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// debPackage is what the documentation of the Debian package may name:
// read from deploy/debian/, which scripts/deb.sh packages.
type debPackage struct {
	unit      string   // the unit's name: its file is deploy/debian/NAME.service
	user      string   // its User=
	conffiles []string // installed paths of type config
}

// readDebPackage reads the unit and nfpm's configuration of deploy/debian/.
func readDebPackage() (debPackage, error) {
	dir := filepath.Join(repoRoot, "deploy", "debian")
	unit, err := os.ReadFile(filepath.Join(dir, "companydocs.service"))
	if err != nil {
		return debPackage{}, err
	}
	p := debPackage{unit: "companydocs"}
	if m := regexp.MustCompile(`(?m)^User=(\S+)$`).FindSubmatch(unit); m != nil {
		p.user = string(m[1])
	}
	config, err := os.ReadFile(filepath.Join(dir, "nfpm.yaml"))
	if err != nil {
		return debPackage{}, err
	}
	for _, m := range regexp.MustCompile(`dst: (\S+)\n\s+type: config`).FindAllSubmatch(config, -1) {
		p.conffiles = append(p.conffiles, string(m[1]))
	}
	return p, nil
}

// debFileExample is a name scripts/deb.sh gives the package it writes
// into bin/ (make deb).
const debFileExample = "bin/companydocs_0.0~git20260101120000.0123456789ab-1_amd64.deb"

// checkPackageCommand checks a command of an installed Debian package
// (sudo apt, sudo systemctl, sudo -u USER companydocs, sudoedit,
// journalctl): it cannot run here, so what it names must be what the
// package installs: the file make deb writes, the unit and its user, a
// conffile.
func (d *docRunner) checkPackageCommand(args []string) error {
	p, err := readDebPackage()
	if err != nil {
		return err
	}
	switch {
	case args[0] == "sudoedit":
		for _, a := range args[1:] {
			if !slices.Contains(p.conffiles, a) {
				return fmt.Errorf("sudoedit %s: the package installs no such settings file (%s)", a, strings.Join(p.conffiles, ", "))
			}
		}
		return nil
	case args[0] == "journalctl":
		return checkUnitArgs(p, args[1:], "-u")
	case len(args) > 3 && args[1] == "-u":
		if args[2] != p.user {
			return fmt.Errorf("sudo -u %s: the unit runs as %s", args[2], p.user)
		}
		if _, ok := companydocsArgs(args[3:]); !ok {
			return fmt.Errorf("sudo -u %s %s: only companydocs commands are documented as the service's user", args[2], args[3])
		}
		return d.checkWords(args[3:])
	case len(args) > 2 && args[1] == "apt":
		return checkApt(args[2:])
	case len(args) > 2 && args[1] == "systemctl":
		return checkUnitArgs(p, args[2:], "enable", "disable", "start", "stop", "restart", "status", "--now")
	}
	return fmt.Errorf("the documentation test knows no way to check %q", strings.Join(args, " "))
}

// checkApt checks apt install of the file make deb writes, or apt remove
// or purge of the package.
func checkApt(args []string) error {
	switch args[0] {
	case "install":
		for _, a := range args[1:] {
			if ok, _ := path.Match(strings.TrimPrefix(a, "./"), debFileExample); !ok {
				return fmt.Errorf("apt install %s: make deb writes %s", a, debFileExample)
			}
		}
		return nil
	case "remove", "purge":
		if len(args) != 2 || args[1] != "companydocs" {
			return fmt.Errorf("apt %s %s: the package is companydocs", args[0], strings.Join(args[1:], " "))
		}
		return nil
	}
	return errors.New("apt " + args[0] + ": only install, remove and purge are checked")
}

// checkUnitArgs checks that every argument is an allowed word or the
// package's unit.
func checkUnitArgs(p debPackage, args []string, words ...string) error {
	named := false
	for _, a := range args {
		switch {
		case a == p.unit || a == p.unit+".service":
			named = true
		case !slices.Contains(words, a):
			return fmt.Errorf("%q is neither the unit %s nor one of %v", a, p.unit, words)
		}
	}
	if !named {
		return fmt.Errorf("%v names no unit; the package's is %s", args, p.unit)
	}
	return nil
}
