"""The project's own load generator (``make bench-load``, ``python -m loadtest``).

Bots speak only docs/protocol.md: HTTP for a session's CSRF token and for
invites, a match WebSocket per seat (half of them ``?format=html``, read the way
the browser page reads its fragments). The bots' users and logged-in sessions
are bulk-created beforehand in the server's database (:mod:`loadtest.accounts`).

Modules, usable on their own (a fault drill reuses the bots):

- :mod:`loadtest.setups` — the embedded default (``make run``) and the services
  set-up (``make run-services``) as subprocesses, their processes found and torn down;
- :mod:`loadtest.bots` — ``Fleet`` / ``Table`` / ``Bot`` and the ``Recorder`` of moves,
  errors, dropped sockets and ended matches;
- :mod:`loadtest.view` — what a seat sees, from a JSON frame or the HTML fragments;
- :mod:`loadtest.probes` — the echo baseline, the login flood, idle lobby sockets;
- :mod:`loadtest.procstat` — CPU and RSS per process from /proc;
- :mod:`loadtest.run`, :mod:`loadtest.report` — the levels, and the tables printed.

Playing from another program (a fault drill), inside a running event loop::

    setup = Services(); setup.start()
    accounts = [Account(u, k) for u, k in setup.create_accounts(400)]
    rec = Recorder()
    fleet = Fleet(setup.base, accounts, rec)
    await fleet.scale(200, Behaviour(), timeout=90)
    ...  # kill a server process; the bots reconnect by themselves
    await fleet.close(); setup.stop()
    # rec.moves: each Move's latency_ms and charged_beyond_thinking_ms (from the
    # mover's main time before and after); rec.drops, rec.errors, rec.ended.
"""
