"""The firewall check's machinery (the check itself is ``preflight.checks.firewall``), one job a module.

Facts from each tool's output: ``tool`` (what every tool's facts have), ``iptables``, ``nftables``,
``ufw``, ``firewalld``, ``addresses``. Rules that run on a packet: ``model``, compiled from the facts
by ``iptables_rules``, ``nft_rules`` and ``nft_matches``, gathered per host by ``rulesets`` and run by
``simulate``. The cluster around a host: ``topology`` (how peers reach it), ``targets`` (the ports
the job needs). Then ``analysis`` (what drops whom, graded), ``sentences`` and ``remedy``.

>>> from preflight.firewall.simulate import verdict
>>> from preflight.firewall.model import Packet
>>> from preflight.firewall.iptables_rules import compile_iptables
>>> ruleset = compile_iptables({"policies": {"INPUT": "DROP"}, "rules": []}, "iptables", "ipv4")
>>> verdict(ruleset, Packet("ipv4", 29500, None, None, None)).definite[0].text
'-P INPUT DROP'
"""
