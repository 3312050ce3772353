import ArgumentParser
import Testing
@testable import syncclient

/// `syncclient admin ...` (O10, docs/ADMIN.md) without a hub: each
/// subcommand's arguments into the request it makes, a usage error for
/// arguments that make none, and the tables of fixed answers.
@Suite struct AdminCommandParsingTests {
    private let hub = "http://127.0.0.1:8080"

    /// The request `syncclient admin ARGUMENTS` makes, parsed as from the command line.
    private func request(_ arguments: [String]) throws -> HTTPRequest {
        let command = try SyncClientCommand.parseAsRoot(["admin"] + arguments)
        switch command {
        case let command as AdminHubsCommand: return command.request()
        case let command as AdminBoardsCommand: return try command.request()
        case let command as AdminBoardCommand: return try command.request()
        case let command as AdminAuditCommand: return command.request()
        case let command as AdminDisconnectCommand: return try command.request()
        case let command as AdminRevokeCommand: return try command.request()
        case let command as AdminFreezeCommand: return try command.request()
        case let command as AdminThawCommand: return try command.request()
        case let command as AdminDrainCommand: return try command.request()
        default: throw ValidationError("not an admin subcommand: \(type(of: command))")
        }
    }

    @Test func readsAreGETsOfTheirPaths() throws {
        #expect(try request(["hubs", hub]) == HTTPRequest(method: "GET", path: "/admin/api/hubs"))
        #expect(try request(["audit", hub]) == HTTPRequest(method: "GET", path: "/admin/api/audit"))
        #expect(try request(["boards", hub]) == HTTPRequest(method: "GET", path: "/admin/api/boards"))
        #expect(try request(["boards", hub, "--kind", "set"]) == HTTPRequest(method: "GET", path: "/admin/api/boards?kind=set"))
        #expect(try request(["boards", hub, "--kind", "todo", "--query", "fri day&x=ü"])
                == HTTPRequest(method: "GET", path: "/admin/api/boards?kind=todo&q=fri%20day%26x%3D%C3%BC"))
        #expect(try request(["boards", hub, "--query", ""]) == HTTPRequest(method: "GET", path: "/admin/api/boards"))
        #expect(try request(["board", hub, "todo/groceries"]) == HTTPRequest(method: "GET", path: "/admin/api/boards/todo/groceries"))
        #expect(try request(["board", "https://hub.example:8443/", "boards/Kitchen-2.b_c", "--json"])
                == HTTPRequest(method: "GET", path: "/admin/api/boards/boards/Kitchen-2.b_c"))
    }

    @Test func actionsArePOSTsWithTheirBodies() throws {
        let disconnect = "/admin/api/disconnect"
        #expect(try request(["disconnect", hub, "--connection", "kitchen/4021"])
                == HTTPRequest(method: "POST", path: disconnect, body: #"{"connection":"kitchen/4021"}"#))
        #expect(try request(["disconnect", hub, "--connection", "rack/a-1/17"])
                == HTTPRequest(method: "POST", path: disconnect, body: #"{"connection":"rack/a-1/17"}"#))
        #expect(try request(["disconnect", hub, "--sub", "ana \"the\" admin"])
                == HTTPRequest(method: "POST", path: disconnect, body: #"{"sub":"ana \"the\" admin"}"#))
        #expect(try request(["disconnect", hub, "--name", "Ana", "--board", "set/friday"])
                == HTTPRequest(method: "POST", path: disconnect, body: #"{"name":"Ana","board":"set/friday"}"#))
        let revoke = "/admin/api/revoke"
        #expect(try request(["revoke", hub, "--jti", "4f1c"]) == HTTPRequest(method: "POST", path: revoke, body: #"{"jti":"4f1c"}"#))
        #expect(try request(["revoke", hub, "--sub", "bo"]) == HTTPRequest(method: "POST", path: revoke, body: #"{"sub":"bo"}"#))
        #expect(try request(["freeze", hub, "todo/groceries"])
                == HTTPRequest(method: "POST", path: "/admin/api/boards/todo/groceries/freeze", body: "{}"))
        #expect(try request(["thaw", hub, "stock/bar"])
                == HTTPRequest(method: "POST", path: "/admin/api/boards/stock/bar/thaw", body: "{}"))
        #expect(try request(["drain", hub, "kitchen"]) == HTTPRequest(method: "POST", path: "/admin/api/hubs/kitchen/drain", body: "{}"))
        // A hub's id is --hub-id's free text: escaped into one segment.
        #expect(try request(["drain", hub, "rack a/1"])
                == HTTPRequest(method: "POST", path: "/admin/api/hubs/rack%20a%2F1/drain", body: "{}"))
    }

    @Test func theCommonFlagsAreTakenByEverySubcommand() throws {
        let command = try SyncClientCommand.parseAsRoot(["admin", "freeze", "https://[::1]:8443", "set/t1", "--token", "abc",
                                                         "--ca", "/ca.pem", "--json", "--timeout", "3"])
        let freeze = try #require(command as? AdminFreezeCommand)
        #expect(freeze.admin.access.token == "abc" && freeze.admin.access.ca == "/ca.pem")
        #expect(freeze.admin.json && freeze.admin.timeout == 3)
        let hub = try AdminTargets.hub(freeze.admin.url)
        #expect(hub.isSecure && hub.host == "[::1]" && hub.port == 8443)
    }

    @Test(arguments: [
        ["hubs", "ws://127.0.0.1:8080"], ["hubs", "http://127.0.0.1:8080/admin"], ["hubs", "http://"], ["hubs", "http://a b:80"],
        ["hubs", "http://127.0.0.1:8080", "--timeout", "0"],
        ["boards", "http://h:1", "--kind", "chess"],
        ["board", "http://h:1", "groceries"], ["board", "http://h:1", "todo/"], ["board", "http://h:1", "todo/.hidden"],
        ["board", "http://h:1", "todo/a/b"], ["board", "http://h:1", "chess/a"],
        ["board", "http://h:1", "todo/" + String(repeating: "x", count: 65)],
        ["disconnect", "http://h:1"], ["disconnect", "http://h:1", "--sub", "ana", "--connection", "hub/1"],
        ["disconnect", "http://h:1", "--name", "Ana"], ["disconnect", "http://h:1", "--board", "set/friday"],
        ["disconnect", "http://h:1", "--sub", "ana", "--board", "set/friday"],
        ["disconnect", "http://h:1", "--connection", "17"], ["disconnect", "http://h:1", "--connection", "hub/x"],
        ["disconnect", "http://h:1", "--connection", "/17"], ["disconnect", "http://h:1", "--sub", ""],
        ["revoke", "http://h:1"], ["revoke", "http://h:1", "--jti", "a", "--sub", "b"],
        ["freeze", "http://h:1"], ["thaw", "http://h:1", "set"], ["drain", "http://h:1", ".."], ["drain", "http://h:1", ""],
    ])
    func argumentsThatMakeNoRequestAreUsageErrors(arguments: [String]) {
        #expect(throws: (any Error).self) { try request(arguments) }
    }

    @Test func theRequestGoesOutAsOneHTTP11Message() {
        let request = HTTPRequest(method: "POST", path: "/admin/api/revoke", body: #"{"sub":"bo"}"#)
        #expect(String(decoding: request.bytes(host: "[::1]", port: 8443, token: "abc.def"), as: UTF8.self) == """
            POST /admin/api/revoke HTTP/1.1\r
            Host: [::1]:8443\r
            User-Agent: syncclient\r
            Accept: application/json\r
            Authorization: Bearer abc.def\r
            Content-Type: application/json\r
            Content-Length: 12\r
            Connection: close\r
            \r
            {"sub":"bo"}
            """)
        let get = HTTPRequest(method: "GET", path: "/admin/api/hubs").bytes(host: "h", port: 80, token: nil)
        #expect(String(decoding: get, as: UTF8.self)
                == "GET /admin/api/hubs HTTP/1.1\r\nHost: h:80\r\nUser-Agent: syncclient\r\nAccept: application/json\r\n"
                + "Connection: close\r\n\r\n")
    }
}

/// The hub's answers (docs/ADMIN.md's examples) as a person reads them, and
/// how each kind of answer ends the command (K3's exit codes).
@Suite struct AdminCommandTableTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func hubs() throws {
        let answer = """
            {"hubs":[{"id":"kitchen","address":"10.0.0.5:8080","version":"0.31.0","uptime_seconds":3605,"connections":1204,
              "boards":311,"cpu_percent":12.5,"rss_bytes":73400320,"redis":{"up":true,"roundtrip_p99_seconds":0.0011,"behind":0}},
             {"id":"hall","address":"10.0.0.6:8080","version":"0.31.0","uptime_seconds":5,"connections":0,"boards":0,
              "cpu_percent":0,"rss_bytes":900,"redis":null,"added_later":[1,2]}]}
            """
        #expect(try AdminView.hubs(bytes(answer)) == """
            ID       ADDRESS        CONNECTIONS  BOARDS    CPU       RSS
            kitchen  10.0.0.5:8080         1204     311  12.5%  70.0 MiB
            hall     10.0.0.6:8080            0       0   0.0%     900 B
            2 hubs
            """)
        #expect(try AdminView.hubs(bytes(#"{"hubs":[]}"#)) == "ID  ADDRESS  CONNECTIONS  BOARDS  CPU  RSS\nno live hubs")
    }

    @Test func boards() throws {
        let answer = """
            {"stored":1520,"boards":[{"kind":"set","name":"friday","connections":7,"per_hub":{"kitchen":4,"hall":3},
              "names":["ana","bo"],"version":88,"frozen":false,"changes_per_minute":12,"bytes_per_second":5120},
             {"kind":"todo","name":"groceries","connections":1,"per_hub":{"hub":1},"names":[],"version":14,"frozen":true,
              "changes_per_minute":0.5,"bytes_per_second":0}]}
            """
        #expect(try AdminView.boards(bytes(answer)) == """
            BOARD           CONNECTIONS  PER HUB            VERSION  FROZEN  CHANGES/MIN
            set/friday                7  hall 3, kitchen 4       88  no               12
            todo/groceries            1  hub 1                   14  yes             0.5
            2 boards with connections; 1520 stored
            """)
    }

    @Test func board() throws {
        let answer = """
            {"kind":"todo","name":"groceries","version":14,"frozen":false,
             "state":{"type":"state","board":"groceries","version":14,"items":[]},
             "changes":[{"time":"2026-11-28T22:50:01.123Z","sub":"ana","name":"Ana","hub":"kitchen",
               "intent":{"type":"add","after":null,"title":"Milk","n":[1,2.5,true]},"answer":"ack","version":14},
              {"time":"2026-11-28T22:49:00.000Z","sub":null,"name":"Bo","hub":"hall",
               "intent":{"title":"a very long title that goes on and on past what a table cell shows","type":"edit"},
               "answer":"frozen","version":null}],
             "connections":[{"id":"kitchen/17","name":"Ana","sub":"ana","role":"write","hub":"kitchen","address":"10.0.0.9",
               "since":"2026-11-28T22:40:00.000Z","client":"page","queued_bytes":0}]}
            """
        let text = try AdminView.board(bytes(answer))
        #expect(text == """
            todo/groceries  version 14  not frozen

            LAST CHANGES (newest first)
            TIME                      SUB  NAME  HUB      INTENT                                                        ANSWER  VERSION
            2026-11-28T22:50:01.123Z  ana  Ana   kitchen  {"type":"add","after":null,"n":[1,2.5,true],"title":"Milk"}   ack          14
            2026-11-28T22:49:00.000Z  -    Bo    hall     {"type":"edit","title":"a very long title that goes on and …  frozen        -

            CONNECTIONS
            ID          NAME  SUB  ROLE   HUB      ADDRESS   SINCE                     CLIENT  QUEUED
            kitchen/17  Ana   ana  write  kitchen  10.0.0.9  2026-11-28T22:40:00.000Z  page       0 B
            """)
        let quiet = #"{"kind":"set","name":"t1","version":0,"frozen":true,"state":{},"changes":[],"connections":[]}"#
        #expect(try AdminView.board(bytes(quiet)) == "set/t1  version 0  frozen\n\nLAST CHANGES (newest first)\nnone\n\nCONNECTIONS\nnone")
    }

    /// As a hub answers today: a change as stored says `op`; an open hub's
    /// audit has an empty `sub`.
    @Test func changesLeadWithWhatTheyAreAndEmptyCellsShowADash() throws {
        let board = """
            {"kind":"todo","name":"g","version":1,"frozen":false,"state":{},"changes":[{"time":"t","sub":null,"name":"guest-2",
              "hub":"hub","intent":{"after":null,"id":"eX","memo":"","op":"add","title":"Milk"},"answer":"ack","version":1}],
             "connections":[]}
            """
        let text = try AdminView.board(bytes(board))
        #expect(text.contains(#"t     -    guest-2  hub  {"op":"add","after":null,"id":"eX","memo":"","title":"Milk"}  ack"#))
        let audit = #"{"entries":[{"time":"t","sub":"","address":"127.0.0.1","action":"thaw","target":"todo/g","result":"version 4"}]}"#
        #expect(try AdminView.audit(bytes(audit)) == "TIME  SUB  ACTION  TARGET  RESULT\nt     -    thaw    todo/g  version 4\n1 entry")
    }

    @Test func aBoardShowsItsNewestChangesOnly() throws {
        let change = #"{"time":"t","sub":"a","name":"A","hub":"h","intent":{"type":"x"},"answer":"ack","version":1}"#
        let answer = #"{"kind":"set","name":"t1","version":1,"frozen":false,"changes":["#
            + Array(repeating: change, count: 100).joined(separator: ",") + #"],"connections":[]}"#
        let lines = try AdminView.board(bytes(answer)).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count(where: { $0.hasPrefix("t  ") }) == AdminView.changesShown)
        #expect(lines.contains("(the newest 20 of 100; --json shows them all)"))
    }

    @Test func audit() throws {
        let answer = """
            {"entries":[{"time":"2026-11-28T22:51:00.000Z","sub":"ops","address":"10.0.0.2","action":"freeze",
              "target":"todo/groceries","result":"ok"},
             {"time":"2026-11-28T22:50:00.000Z","sub":"ops","address":"10.0.0.2","action":"drain","target":"kitchen",
              "result":"not_found"}]}
            """
        #expect(try AdminView.audit(bytes(answer)) == """
            TIME                      SUB  ACTION  TARGET          RESULT
            2026-11-28T22:51:00.000Z  ops  freeze  todo/groceries  ok
            2026-11-28T22:50:00.000Z  ops  drain   kitchen         not_found
            2 entries
            """)
    }

    @Test func cellsFromTheHubCannotDriveTheTerminal() throws {
        let answer = #"{"entries":[{"time":"t","sub":"\u001b[2Jops","action":"freeze","target":"a\nb","result":"ok"}]}"#
        let text = try AdminView.audit(bytes(answer))
        #expect(text == "TIME  SUB      ACTION  TARGET  RESULT\nt     ?[2Jops  freeze  a?b     ok\n1 entry")
    }

    @Test func anAnswerWithoutAFieldTheTableNeedsSaysWhich() {
        #expect(throws: AdminView.Unreadable(description: "no \"hubs[0].cpu_percent\" in the hub's answer")) {
            try AdminView.hubs(self.bytes(#"{"hubs":[{"id":"a","address":"b","connections":1,"boards":2,"rss_bytes":3}]}"#))
        }
        #expect(throws: AdminView.Unreadable(description: "\"boards[0].per_hub\" in the hub's answer is not what this client reads")) {
            try AdminView.boards(self.bytes("""
                {"stored":1,"boards":[{"kind":"set","name":"a","connections":1,"per_hub":3,"version":1,"frozen":false,
                  "changes_per_minute":0}]}
                """))
        }
    }

    @Test func actionsSayWhatHappened() throws {
        #expect(try AdminView.done(bytes(#"{"ok":true,"closed":3}"#)) { "closed " + AdminView.count($0.closed ?? 0, "connection") }
                == "closed 3 connections")
        #expect(try AdminView.done(bytes(#"{"ok":true,"closed":1}"#)) { "closed " + AdminView.count($0.closed ?? 0, "connection") }
                == "closed 1 connection")
        #expect(throws: AdminView.Unreadable.self) { try AdminView.done(self.bytes(#"{"ok":false}"#)) { _ in "" } }
    }

    private func outcome(_ status: Int, _ body: String, json: Bool = false) -> RequestOutcome {
        AdminOutcome.of(.answered(status: status, type: "application/json", body: Array(body.utf8)), from: "http://h:1", json: json,
                        view: AdminView.audit)
    }

    @Test func theAnswerDecidesTheExitCode() {
        let entries = "{\n  \"entries\": [ ]\n}\n"
        #expect(outcome(200, entries) == .done("TIME  SUB  ACTION  TARGET  RESULT\nno actions yet"))
        #expect(outcome(200, entries, json: true) == .done(#"{  "entries": [ ]}"#))
        #expect(outcome(200, entries, json: true).exitCode == 0)
        let refused = outcome(404, #"{"error":"not_found","message":"no board todo/x"}"#)
        #expect(refused == .refused("not_found: no board todo/x") && refused.exitCode == 1)
        #expect(outcome(401, #"{"error":"unauthorized"}"#) == .refused("unauthorized"))
        #expect(outcome(502, "<html>bad gateway</html>") == .refused("HTTP 502"))
        #expect(outcome(503, #"{"error":"unavailable","message":"Redis is down"}"#, json: true) == .refused("unavailable: Redis is down"))
        #expect(outcome(301, "") == .failed("http://h:1 answered HTTP 301, which syncclient admin does not follow"))
        #expect(outcome(200, "not json") == .failed("http://h:1 answered HTTP 200 with a body that is not a JSON object"))
        #expect(outcome(200, #"{"entries":[{"time":"t"}]}"#) == .failed("http://h:1: no \"entries[0].action\" in the hub's answer"))
        #expect(outcome(200, #"{"entries":[{"time":"t"}]}"#).exitCode == 2)
        let unreachable = AdminOutcome.of(.failed("cannot connect to h:1"), from: "http://h:1", json: false, view: AdminView.audit)
        #expect(unreachable == .failed("cannot reach http://h:1: cannot connect to h:1") && unreachable.exitCode == 2)
    }
}
