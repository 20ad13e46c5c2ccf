# serve.tcl --
#
#	tclcprof::serve: a small HTTP/1.1 server inside the profiled program
#	that answers on the paths of Go's net/http/pprof, so that go tool
#	pprof, Pyroscope, Parca and a browser can take a CPU profile of a
#	running program:
#
#	    /debug/pprof/			an HTML index
#	    /debug/pprof/profile?seconds=N	a fresh N-second profile, pprof
#	    /tclcprof/flame?seconds=N		the same as a flame graph page
#	    /debug/pprof/heap?seconds=N		a memory profile of the next N
#	    /debug/pprof/allocs?seconds=N	seconds (-mode memory), pprof
#
#	The server runs in a thread of its own (generic/cmdserve.c), in
#	an interpreter of its own there that loads the package and runs
#	the procedures below in its event loop (socket -server, fileevent,
#	after): it answers whatever the program's thread does. What must
#	happen in the program's thread, starting the run of a request in
#	the program's interpreter and exporting its profile (the Owner*
#	procedures), is handed to it with Ring and runs at its next
#	asynchronous-event check: in a busy loop of Tcl code within a few
#	instructions, in the event loop at once, after a C call or a
#	blocking wait once it returns. A profile is collected without
#	blocking anything: the request starts a run (tclcprof::start
#	-scope process -duration N, which stops it on time even in a busy
#	program) and an "after" timer of the server's thread asks for the
#	export once it has ended. One profile at a time: a second request
#	meanwhile, or any while the program profiles on its own, is
#	answered 409 Conflict; the program's own run is never disturbed,
#	and its latest profile is kept aside while the collector serves a
#	request (Keep; cmdserve.c's Aside): status, data and save give
#	it, not the request's. heap and allocs without seconds= answer at
#	once from the program's own memory run (HeapNow), as Go's heap
#	profile is the heap now.
#
#	Each connection carries one request: the response says "Connection:
#	close" and the connection is closed once it is written (in the
#	background: the channel is non-blocking).
#
# Copyright (c) 2026 The tclcprof authors.
#
# See the file "LICENSE" for information on usage and redistribution of
# this file, and for a DISCLAIMER OF ALL WARRANTIES.

namespace eval ::tclcprof {
    namespace export serve
}

namespace eval ::tclcprof::servelib {
    namespace path ::tclcprof::reportlib

    variable optionNames {-address -allow -port -stop -token}

    # The listening socket ("" when not serving), its port, address and
    # the client address patterns it accepts.
    variable listen ""
    variable port 0
    variable address 127.0.0.1
    variable allow {}
    # The token requests must carry (Authorization: Bearer), or "".
    variable token ""
    # Open connections: socket -> dict (client address, state, the
    # request's lines read so far, its timer).
    variable conns {}
    # The profile being collected for a request: {} or a dict with
    # sock, kind (pprof or html), label, end (ms), timer.
    variable collecting {}
    variable runs 0
    # The label of the last run started for a request: a stopped profile
    # of another label is the program's (the program's thread).
    variable lastLabel ""
    # Questions asked of the program's thread (Ring) that await their
    # answer: id -> the command prefix that takes code and result.
    variable asked {}
    variable askId 0

    # Limits: the longest profile asked for, in seconds; the default;
    # a request's size (a line, the header lines, the whole) and the
    # time it may take to arrive (ms); connections open at once.
    variable maxSeconds 600
    variable defaultSeconds 30
    variable maxLine 8192
    variable maxHeaders 100
    variable requestTimeout 10000
    # How long a profile request waits for the program's thread to start
    # its run (ms): a thread blocked in C longer gets the client 503.
    variable startTimeout 10000
    variable maxConnections 64

    # The default -allow: loopback clients, IPv4 and IPv6.
    variable loopback {127.* ::1 ::ffff:127.*}

    variable reasons {
	200 OK 301 {Moved Permanently} 400 {Bad Request} 401 Unauthorized
	403 Forbidden
	404 {Not Found} 405 {Method Not Allowed} 408 {Request Timeout}
	409 Conflict 431 {Request Header Fields Too Large}
	500 {Internal Server Error} 503 {Service Unavailable}
	505 {HTTP Version Not Supported}
    }
}

# ::tclcprof::serve --
#
#	tclcprof::serve ?-port N? ?-address ADDR? ?-allow PATTERNS? ?-token T?
#	tclcprof::serve -stop
#
# Results:
#	The port the server listens on (the one chosen by the system for
#	-port 0); with -stop, the empty string. Errors: TCLCPROF OPTION,
#	TCLCPROF VALUE option value, TCLCPROF STATE SERVING (already
#	serving), TCLCPROF STATE NOTSERVING (-stop while not serving),
#	TCLCPROF SERVE LISTEN (the socket could not be opened).

proc ::tclcprof::serve {args} {
    set o [servelib::ParseOptions $args]
    if {[dict exists $o -stop]} {
	servelib::Halt
	return
    }
    return [servelib::Start [dict get $o -port] [dict get $o -address] \
	    [dict get $o -allow] [dict get $o -token]]
}

# FromOption --
#	In the program's thread: -serve of tclcprof run and of the TCLCPROF
#	environment variable, {port ?option value ...?} (the options of
#	tclcprof::serve: -address, -allow, -token): start the server. The
#	port. Errors: TCLCPROF VALUE -serve value, and those of serve.

proc ::tclcprof::servelib::FromOption {value} {
    if {[catch {llength $value} n] || $n % 2 != 1
	    || ![string is entier -strict [lindex $value 0]]
	    || "-stop" in [lrange $value 1 end]
	    || "-port" in [lrange $value 1 end]} {
	Fail [list VALUE -serve $value] "bad value \"[Escape $value]\" for\
		-serve: expected a port, or a list of a port and options of\
		tclcprof::serve (-address, -allow, -token)"
    }
    try {
	return [::tclcprof::serve -port [lindex $value 0] \
		{*}[lrange $value 1 end]]
    } trap {TCLCPROF VALUE} {msg} {
	Fail [list VALUE -serve $value] "bad value \"[Escape $value]\" for\
		-serve: $msg"
    }
}

# Start --
#	In the program's thread: start the server's thread, which listens.
#	Errors: TCLCPROF STATE SERVING, TCLCPROF SERVE LISTEN (from the
#	server's thread), TCLCPROF SERVE THREAD.

proc ::tclcprof::servelib::Start {p addr patterns tok} {
    variable port
    variable address

    if {[llength [info commands ::tclcprof::servelib::Server]]} {
	Fail {STATE SERVING} "already serving on $address port $port:\
		tclcprof::serve -stop first"
    }
    set port [Spawn [list ::tclcprof::servelib::Listen $p $addr $patterns \
	    $tok]]
    set address $addr
    return $port
}

# Halt --
#	In the program's thread: end the server's thread (its connections
#	are closed) and stop a run collected for a request (its data is
#	dropped).

proc ::tclcprof::servelib::Halt {} {
    variable lastLabel
    if {![llength [info commands ::tclcprof::servelib::Server]]} {
	Fail {STATE NOTSERVING} "not serving: tclcprof::serve starts the\
		server"
    }
    Server stop
    Aside bypass {
	set st [::tclcprof::status]
	if {$::tclcprof::servelib::lastLabel ne "" && [dict get $st running]
		&& [dict get $st label] eq $::tclcprof::servelib::lastLabel} {
	    catch {::tclcprof::stop}
	}
    }
    return
}

proc ::tclcprof::servelib::ParseOptions {arglist} {
    variable optionNames
    variable loopback

    if {[llength $arglist] == 1 && [lindex $arglist 0] eq "-stop"} {
	return {-stop 1}
    }
    set o [dict create -port 6060 -address 127.0.0.1 -allow $loopback \
	    -token {}]
    foreach {opt v} [OptionPairs $arglist $optionNames] {
	switch -- $opt {
	    -stop {
		Fail {VALUE -stop} "-stop takes no value and no other option:\
			tclcprof::serve -stop"
	    }
	    -port {
		if {![string is entier -strict $v] || $v < 0 || $v > 65535} {
		    Fail [list VALUE -port $v] "bad value \"[Escape $v]\" for\
			    -port: expected a port number from 0 to 65535 (0:\
			    any free port)"
		}
		set v [expr {$v + 0}]
	    }
	    -address {
		if {$v eq "" || [regexp {[\s\x00-\x1f]} $v]} {
		    Fail [list VALUE -address $v] "bad value \"[Escape $v]\"\
			    for -address: expected a host name or address"
		}
	    }
	    -token {
		if {![regexp {^[A-Za-z0-9._~+/=-]+$} $v]} {
		    Fail [list VALUE -token] "bad value for -token: expected\
			    a non-empty string of letters, digits and\
			    -._~+/= (the token68 of RFC 7235)"
		}
	    }
	    -allow {
		if {[catch {llength $v} n] || $n == 0} {
		    Fail [list VALUE -allow $v] "bad value \"[Escape $v]\" for\
			    -allow: expected a list of glob patterns of client\
			    addresses"
		}
	    }
	}
	dict set o $opt $v
    }
    return $o
}

# Listen --
#	In the server's thread: open the listening socket. Errors:
#	TCLCPROF SERVE LISTEN.

proc ::tclcprof::servelib::Listen {p addr patterns tok} {
    variable listen
    variable port
    variable address
    variable allow
    variable token

    if {[catch {socket -server ::tclcprof::servelib::Accept -myaddr $addr $p} \
	    sock]} {
	Fail [list SERVE LISTEN $addr $p] "cannot listen on $addr port $p:\
		[string tolower $sock 0 0]"
    }
    set listen $sock
    set port [lindex [chan configure $sock -sockname] 2]
    set address $addr
    set allow $patterns
    set token $tok
    return $port
}

# Stop --
#	In the server's thread, as it ends: close the listening socket and
#	every connection. (Halt, in the program's thread, stops a run
#	collected for a request.)

proc ::tclcprof::servelib::Stop {} {
    variable listen
    variable conns
    variable collecting

    catch {close $listen}
    set listen ""
    if {[dict size $collecting]} {
	after cancel [dict get $collecting timer]
	set collecting {}
    }
    foreach sock [dict keys $conns] {
	Close $sock
    }
    return
}

# Ask --
#	In the server's thread: have the program's thread evaluate script
#	in its interpreter; cmd (a command prefix) gets the code and the
#	result when it has.

proc ::tclcprof::servelib::Ask {script cmd} {
    variable asked
    variable askId
    set id [incr askId]
    dict set asked $id $cmd
    Ring $id $script
}

# Reply --
#	In the server's thread: the answer to a question asked with Ask.

proc ::tclcprof::servelib::Reply {id code result} {
    variable asked
    if {![dict exists $asked $id]} {
	return
    }
    set cmd [dict get $asked $id]
    dict unset asked $id
    {*}$cmd $code $result
}

# Ours --
#	In the program's thread: whether the profile running now is the
#	one of label, collected for a request.

proc ::tclcprof::servelib::Ours {label} {
    set st [Aside bypass ::tclcprof::status]
    expr {[dict get $st running] && [dict get $st label] eq $label}
}

# Close --
#	Forget a connection and close it (output still pending is written
#	in the background).

proc ::tclcprof::servelib::Close {sock} {
    variable conns
    if {[dict exists $conns $sock]} {
	after cancel [dict get $conns $sock timer]
	dict unset conns $sock
    }
    catch {chan event $sock readable {}}
    catch {close $sock}
}

# Accept --
#
#	A new connection: read its request, with a time limit. With
#	maxConnections open already, the one whose request has been
#	arriving longest (an idle or slow client) is answered 503 and
#	closed to make room: clients that hold connections open without
#	asking anything cannot lock others out.

proc ::tclcprof::servelib::Accept {sock addr clientPort} {
    variable conns
    variable requestTimeout
    variable maxConnections

    chan configure $sock -blocking 0 -translation {auto binary} \
	    -encoding iso8859-1 -buffering full
    if {[dict size $conns] >= $maxConnections} {
	# The oldest still reading its request (a timer runs until the
	# request has come), else this one.
	set victim $sock
	dict for {s c} $conns {
	    if {[dict get $c timer] ne ""} {
		set victim $s
		break
	    }
	}
	if {$victim eq $sock} {
	    Respond $sock 503 "too many connections at once\n" {} 0
	    return
	}
	Respond $victim 503 "too many connections at once: the request\
		that was arriving for the longest is dropped\n" {} 0
    }
    dict set conns $sock [dict create addr $addr lines {} \
	    timer [after $requestTimeout [list ::tclcprof::servelib::Timeout $sock]]]
    chan event $sock readable [list ::tclcprof::servelib::Read $sock]
}

proc ::tclcprof::servelib::Timeout {sock} {
    variable conns
    if {[dict exists $conns $sock]} {
	dict set conns $sock timer {}
	Respond $sock 408 "the request did not arrive in time\n" {} 0
    }
}

# Read --
#	Read the request line and header lines as they arrive; the request
#	is handled once the blank line that ends them has come.

proc ::tclcprof::servelib::Read {sock} {
    variable conns
    variable maxLine
    variable maxHeaders

    if {[catch {gets $sock line} n]} {
	Close $sock
	return
    }
    while {$n >= 0} {
	if {$line eq ""} {
	    if {![llength [dict get $conns $sock lines]]} {
		# Blank lines before the request line are allowed.
		if {[catch {gets $sock line} n]} {
		    Close $sock
		    return
		}
		continue
	    }
	    chan event $sock readable {}
	    after cancel [dict get $conns $sock timer]
	    dict set conns $sock timer {}
	    Request $sock [dict get $conns $sock lines]
	    return
	}
	if {$n > $maxLine} {
	    Respond $sock 431 "a request line or header line is longer\
		    than $maxLine bytes\n" {} 0
	    return
	}
	dict set conns $sock lines [linsert [dict get $conns $sock lines] \
		end $line]
	if {[llength [dict get $conns $sock lines]] > $maxHeaders + 1} {
	    Respond $sock 431 "more than $maxHeaders header lines\n" {} 0
	    return
	}
	if {[catch {gets $sock line} n]} {
	    Close $sock
	    return
	}
    }
    if {[chan eof $sock]} {
	Close $sock
    } elseif {[chan pending input $sock] > $maxLine} {
	Respond $sock 431 "a request line or header line is longer than\
		$maxLine bytes\n" {} 0
    }
}

# Request --
#	Handle a request: its lines (the request line, then the header
#	lines).

proc ::tclcprof::servelib::Request {sock lines} {
    variable conns
    variable allow
    variable token

    if {![regexp {^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP/([0-9])\.([0-9])$} \
	    [lindex $lines 0] -> method target major minor]} {
	Respond $sock 400 "malformed request line\n" {} 0
	return
    }
    set head [expr {$method eq "HEAD"}]
    if {$major != 1} {
	Respond $sock 505 "only HTTP/1.0 and HTTP/1.1 are served\n" {} $head
	return
    }
    set addr [dict get $conns $sock addr]
    set allowed 0
    foreach pattern $allow {
	if {[string match $pattern $addr]} {
	    set allowed 1
	    break
	}
    }
    if {!$allowed} {
	Respond $sock 403 "client address $addr is not allowed (tclcprof::serve\
		-allow)\n" {} $head
	return
    }
    if {$token ne "" && ![Authorized [lrange $lines 1 end]]} {
	Respond $sock 401 "this server asks for a token: Authorization:\
		Bearer TOKEN (tclcprof::serve -token)\n" \
		{WWW-Authenticate {Bearer realm="tclcprof"}} $head
	return
    }
    # The origin form (/path?query), or the absolute form of proxies.
    regsub {^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*} $target {} target
    if {[string index $target 0] ne "/"} {
	Respond $sock 400 "bad request target \"$target\"\n" {} $head
	return
    }
    regexp {^([^?#]*)(?:\?([^#]*))?} $target -> rawPath rawQuery
    if {[catch {Unescape $rawPath 0} path]
	    || [catch {Query $rawQuery} query]} {
	Respond $sock 400 "bad escape in \"$target\"\n" {} $head
	return
    }
    switch -- $path {
	/debug/pprof/ - /debug/pprof {
	    if {[Method $sock $method {GET HEAD}]} {
		Respond $sock 200 [Index] {Content-Type {text/html; charset=utf-8}} \
			$head
	    }
	}
	/debug/pprof/profile {
	    if {[Method $sock $method GET]} {
		Collect $sock pprof $query
	    }
	}
	/tclcprof/flame {
	    if {[Method $sock $method GET]} {
		Collect $sock html $query
	    }
	}
	/debug/pprof/heap - /debug/pprof/allocs {
	    if {[Method $sock $method GET]} {
		Collect $sock [string range $path 13 end] $query
	    }
	}
	default {
	    if {[string match /debug/pprof/* $path]} {
		Respond $sock 404 "no profile \"[string range $path 13 end]\"\
			here: tclcprof serves /debug/pprof/profile (CPU),\
			/debug/pprof/heap (memory) and /tclcprof/flame (a flame\
			graph page); see /debug/pprof/\n" {} $head
	    } else {
		Respond $sock 404 "not found: \"$path\"; see /debug/pprof/\n" \
			{} $head
	    }
	}
    }
}

# Authorized --
#	Whether the header lines carry Authorization: Bearer with the
#	server's token (the header's name and the scheme in any case).

proc ::tclcprof::servelib::Authorized {headers} {
    variable token
    foreach line $headers {
	if {[regexp -nocase {^authorization:[ \t]*bearer[ \t]+(\S+)[ \t]*$} \
		$line -> given] && $given eq $token} {
	    return 1
	}
    }
    return 0
}

# Method --
#	Whether the method is one of those allowed; if not, answer 405.

proc ::tclcprof::servelib::Method {sock method allowed} {
    if {$method in $allowed} {
	return 1
    }
    Respond $sock 405 "method $method not allowed here: use\
	    [join $allowed " or "]\n" [list Allow [join $allowed ", "]] \
	    [expr {$method eq "HEAD"}]
    return 0
}

# Unescape --
#	%XX escapes (UTF-8 bytes) decoded, and in a query "+" as a space.
#	An error for a malformed escape.

proc ::tclcprof::servelib::Unescape {s plus} {
    if {$plus} {
	set s [string map {+ " "} $s]
    }
    if {[string first % $s] < 0} {
	return $s
    }
    if {[regexp {%(?![0-9A-Fa-f]{2})} $s]} {
	error "bad escape"
    }
    set bytes [encoding convertto utf-8 $s]
    set out ""
    while {[regexp -indices {%([0-9A-Fa-f]{2})} $bytes all hex]} {
	append out [string range $bytes 0 [lindex $all 0]-1] \
		[binary format H2 [string range $bytes {*}$hex]]
	set bytes [string range $bytes [lindex $all 1]+1 end]
    }
    encoding convertfrom utf-8 $out$bytes
}

# Query --
#	The parameters of a query string as a dict (the first value of a
#	name counts).

proc ::tclcprof::servelib::Query {q} {
    set out {}
    foreach part [split $q &] {
	if {$part eq ""} {
	    continue
	}
	set i [string first = $part]
	if {$i < 0} {
	    set k [Unescape $part 1]
	    set v ""
	} else {
	    set k [Unescape [string range $part 0 $i-1] 1]
	    set v [Unescape [string range $part $i+1 end] 1]
	}
	if {![dict exists $out $k]} {
	    dict set out $k $v
	}
    }
    return $out
}

# Collect --
#
#	In the server's thread: a profile for a request. Check its
#	parameters (seconds, and the sampling options rate, clock, native
#	and lines) and ask the program's thread to start a run that stops
#	by itself after that many seconds (OwnerStart); once it has
#	started, a timer asks for its export when it has ended (Finish).
#	Answers 400 for bad parameters, 409 when a profile runs already
#	(the program's, or one for another request). The program's latest
#	profile is kept aside meanwhile (OwnerStart, Keep). heap and allocs
#	without seconds answer at once (HeapNow).

proc ::tclcprof::servelib::Collect {sock kind query} {
    variable collecting
    variable maxSeconds
    variable defaultSeconds
    variable runs

    if {$kind in {heap allocs} && ![dict exists $query seconds]} {
	HeapNow $sock $kind
	return
    }
    # allocs is heap with Go's other default sample type (alloc_space
    # rather than inuse_space: export's -view alloc).
    set view ""
    if {$kind eq "allocs"} {
	set kind heap
	set view alloc
    }
    set seconds $defaultSeconds
    if {[dict exists $query seconds]} {
	set seconds [dict get $query seconds]
	if {![regexp {^[0-9]{1,9}(\.[0-9]{1,9})?$} $seconds]
		|| $seconds <= 0 || $seconds > $maxSeconds} {
	    Respond $sock 400 "bad seconds=[Escape $seconds]: expected a\
		    number of seconds more than 0 and at most $maxSeconds\n" {} 0
	    return
	}
    }
    # heap: memory profiling while it runs (allocations and what is still
    # live at the end, Go's four sample types); its sampling option is
    # memrate.
    if {$kind eq "heap"} {
	set opts [list -mode memory -db {} -history {} -duration $seconds]
	set params {memrate native lines}
    } else {
	set opts [list -mode sample -db {} -history {} -duration $seconds]
	set params {rate clock native lines}
    }
    lappend opts -scope process
    foreach name $params {
	if {[dict exists $query $name]} {
	    lappend opts -$name [dict get $query $name]
	}
    }
    if {[dict size $collecting]} {
	set left [expr {max(1, ([dict get $collecting end] \
		- [clock milliseconds] + 999) / 1000)}]
	Respond $sock 409 "a profile is being collected for another request\
		(one at a time): try again in $left s\n" \
		[list Retry-After $left] 0
	return
    }
    set label "tclcprof::serve [incr runs] ([dict get {
	html /tclcprof/flame pprof /debug/pprof/profile heap /debug/pprof/heap
    } $kind], $seconds s)"
    lappend opts -label $label
    set ms [expr {round($seconds * 1000)}]
    # Until the program's thread has answered, the collection is
    # "starting" (no timer yet).
    variable startTimeout
    set collecting [dict create sock $sock kind $kind view $view label $label \
	    end [expr {[clock milliseconds] + $ms}] ms $ms \
	    timer [after $startTimeout ::tclcprof::servelib::NoStart]]
    chan event $sock readable [list ::tclcprof::servelib::Waiting $sock]
    Ask [list ::tclcprof::servelib::OwnerStart $opts $label $query] \
	    [list ::tclcprof::servelib::Started $label]
    return
}

# OwnerStart --
#	In the program's thread: start the run of a request (options opts,
#	label) unless the program profiles; its latest profile is kept
#	aside first.
#	The result: {} when it started, else {code message headers} for
#	the response.

proc ::tclcprof::servelib::OwnerStart {opts label query} {
    variable lastLabel
    set st [Aside bypass ::tclcprof::status]
    if {[dict get $st running]} {
	return [list 409 "tclcprof is already profiling this interpreter\
		(a run the program started): it is left alone; try again\
		once it has stopped\n" {}]
    }
    # The program's latest profile (or its having none) is kept aside
    # before the collector is used: status, data and save give it until
    # the program starts or resets a run of its own.
    if {![Aside active]} {
	Keep
    }
    set lastLabel $label
    try {
	Aside bypass [list ::tclcprof::start {*}$opts]
    } trap {TCLCPROF VALUE} {msg opts} {
	set param [string range [lindex [dict get $opts -errorcode] 2] 1 end]
	if {![dict exists $query $param]} {
	    return [list 500 "tclcprof::start failed: $msg\n" {}]
	}
	return [list 400 "bad $param=[Escape [dict get $query $param]]:\
		$msg\n" {}]
    } trap {TCLCPROF STATE} {msg} {
	return [list 409 "tclcprof cannot profile now: $msg\n" {}]
    } on error {msg} {
	return [list 500 "tclcprof::start failed: $msg\n" {}]
    }
    return {}
}

# Keep --
#	In the program's thread: keep the program's latest profile aside
#	(cmdserve.c, Aside): its status, its data, and each view of a
#	memory profile, as they are now.

proc ::tclcprof::servelib::Keep {} {
    set kept [dict create status [::tclcprof::status]]
    if {![catch {::tclcprof::data} profile]} {
	dict set kept data $profile
	foreach view {alloc live peak} {
	    foreach count {0 1} {
		if {![catch {::tclcprof::data -view $view -count $count} v]} {
		    dict set kept views [list $view $count] $v
		}
	    }
	}
    }
    Aside keep $kept
}

# HeapNow --
#	In the server's thread: heap or allocs without seconds: the memory
#	profile of the program's own run of -mode memory as it is now
#	(OwnerHeap), at once, as Go's is the heap since the program
#	started; 409 when the program runs none. It collects nothing and
#	does not count as a profile being collected. A program's thread
#	that does not answer within the start timeout: 503.

proc ::tclcprof::servelib::HeapNow {sock kind} {
    variable askId
    variable startTimeout
    set id [expr {$askId + 1}]
    set timer [after $startTimeout [list ::tclcprof::servelib::HeapLate \
	    $sock $id]]
    chan event $sock readable [list ::tclcprof::servelib::HeapWaiting \
	    $sock $id $timer]
    Ask [list ::tclcprof::servelib::OwnerHeap $kind] \
	    [list ::tclcprof::servelib::HeapAnswered $sock $timer]
}

# HeapWaiting --
#	Input on a connection waiting for its heap now: more of the
#	request (dropped), or the client gone: its answer is not waited for.

proc ::tclcprof::servelib::HeapWaiting {sock id timer} {
    variable asked
    if {![catch {read $sock 65536}] && ![chan eof $sock]} {
	return
    }
    after cancel $timer
    dict unset asked $id
    Close $sock
}

proc ::tclcprof::servelib::HeapLate {sock id} {
    variable asked
    variable startTimeout
    dict unset asked $id
    Respond $sock 503 "the program's thread did not answer within\
	    [expr {$startTimeout / 1000.0}] s (busy in a C call or\
	    blocked): try again later\n" {Retry-After 10} 0
}

proc ::tclcprof::servelib::HeapAnswered {sock timer code result} {
    after cancel $timer
    Finished $sock $code $result
}

# OwnerHeap --
#	In the program's thread: the pprof export of the memory profile of
#	the program's own run, running now with -mode memory (or sample
#	memory), as {code body headers}; 409 when there is none.

proc ::tclcprof::servelib::OwnerHeap {kind} {
    variable lastLabel
    set st [Aside bypass ::tclcprof::status]
    if {![dict get $st running]
	    || ($lastLabel ne "" && [dict get $st label] eq $lastLabel)
	    || [lindex [dict get $st mode] end] ne "memory"} {
	return [list 409 "no memory profile to show now: the program runs\
		no memory profiling of its own (tclcprof::start -mode\
		memory, TCLCPROF='-mode memory ...'); ask /debug/pprof/$kind?seconds=N\
		for the allocations of the next N seconds\n" {}]
    }
    set profile [Aside bypass {::tclcprof::data -view alloc}]
    dict set profile meta label "[dict get $profile meta label]\
	    (/debug/pprof/$kind, now)"
    set viewOpt [expr {$kind eq "allocs" ? {-view alloc} : {}}]
    if {[catch {::tclcprof::export -format pprof {*}$viewOpt \
	    -data $profile} out opts]} {
	if {[lrange [dict get $opts -errorcode] 0 2] ne {TCLCPROF NODATA tree}} {
	    return [list 500 "cannot export the profile: $out\n" {}]
	}
	set out [EmptyPprof $profile [expr {$kind eq "allocs" ? "alloc" : ""}]]
    }
    return [list 200 $out [list Content-Type application/octet-stream \
	    Content-Disposition {attachment; filename="profile"}]]
}

# NoStart --
#	In the server's thread: the program's thread has not started the
#	run of a request in time (it is blocked in C): 503; if it starts
#	it later, Started stops it.

proc ::tclcprof::servelib::NoStart {} {
    variable collecting
    variable startTimeout
    set sock [dict get $collecting sock]
    set collecting {}
    Respond $sock 503 "the program's thread did not start the profile\
	    within [expr {$startTimeout / 1000.0}] s (busy in a C call or\
	    blocked): try again later\n" {Retry-After 10} 0
}

# Started --
#	In the server's thread: the program's thread's answer to
#	OwnerStart. The run goes: a timer asks for its export when its time
#	is up (-duration stops it on time, in a busy program too).

proc ::tclcprof::servelib::Started {label code result} {
    variable collecting
    if {![dict size $collecting] || [dict get $collecting label] ne $label} {
	# The client went away meanwhile, or the start came too late
	# (NoStart): a run that started is stopped.
	if {!$code && ![llength $result]} {
	    Ask [list ::tclcprof::servelib::OwnerStop $label] list
	}
	return
    }
    after cancel [dict get $collecting timer]
    set sock [dict get $collecting sock]
    if {$code || [llength $result]} {
	set collecting {}
	if {$code} {
	    Respond $sock 500 "tclcprof::start failed: $result\n" {} 0
	} else {
	    Respond $sock {*}$result 0
	}
	return
    }
    set ms [dict get $collecting ms]
    dict set collecting end [expr {[clock milliseconds] + $ms}]
    dict set collecting timer [after [expr {$ms + 20}] \
	    ::tclcprof::servelib::Finish]
}

# Waiting --
#	In the server's thread: input on a connection waiting for its
#	profile: more of the request (read and dropped), or the end: the
#	client went away, and the profile collected for it is stopped and
#	dropped.

proc ::tclcprof::servelib::Waiting {sock} {
    variable collecting
    if {![catch {read $sock 65536}] && ![chan eof $sock]} {
	return
    }
    if {[dict size $collecting] && [dict get $collecting sock] eq $sock} {
	after cancel [dict get $collecting timer]
	Ask [list ::tclcprof::servelib::OwnerStop [dict get $collecting label]] \
		list
	set collecting {}
    }
    Close $sock
}

# OwnerStop --
#	In the program's thread: stop the run of label if it still runs.

proc ::tclcprof::servelib::OwnerStop {label} {
    if {[Ours $label]} {
	catch {Aside bypass {::tclcprof::stop; ::tclcprof::reset}}
    }
    return
}

# Finish --
#	In the server's thread: a profile's time is up: ask the program's
#	thread for its export (OwnerFinish) and answer the request with it.

proc ::tclcprof::servelib::Finish {} {
    variable collecting
    set c $collecting
    set collecting {}
    Ask [list ::tclcprof::servelib::OwnerFinish [dict get $c label] \
	    [dict get $c kind] [dict get $c view]] \
	    [list ::tclcprof::servelib::Finished \
	    [dict get $c sock]]
}

proc ::tclcprof::servelib::Finished {sock code result} {
    variable conns
    if {![dict exists $conns $sock]} {
	return
    }
    if {$code} {
	Respond $sock 500 "cannot export the profile: $result\n" {} 0
    } else {
	Respond $sock {*}$result 0
    }
}

# OwnerFinish --
#	In the program's thread: stop the run of label if it still runs,
#	and export its profile as kind asks. The result: {code body
#	headers} of the response (a body with a Content-Type header is
#	bytes).

proc ::tclcprof::servelib::OwnerFinish {label kind {view {}}} {
    if {[Ours $label]} {
	catch {Aside bypass ::tclcprof::stop}
    }
    if {[catch {Aside bypass ::tclcprof::data} profile]
	    || [catch {dict get $profile meta label} have]
	    || $have ne $label} {
	return [list 409 "the profile was stopped or replaced by the\
		program while it was collected\n" {}]
    }
    # The request's profile is its answer only: the collector lets it go
    # (the program's latest profile stays aside).
    catch {Aside bypass ::tclcprof::reset}
    set format [expr {$kind eq "heap" ? "pprof" : $kind}]
    set viewOpt [expr {$view ne "" ? [list -view $view] : {}}]
    if {[catch {::tclcprof::export -format $format {*}$viewOpt \
	    -data $profile} out opts]} {
	if {[lrange [dict get $opts -errorcode] 0 2] ne {TCLCPROF NODATA tree}} {
	    return [list 500 "cannot export the profile: $out\n" {}]
	} elseif {$format eq "pprof"} {
	    # Nothing sampled (an idle program): an empty profile, which
	    # is what go tool pprof and the scrapers expect.
	    set out [EmptyPprof $profile $view]
	} else {
	    set out "<!DOCTYPE html>\n<html lang=\"en\"><head><meta\
		    charset=\"utf-8\"><title>tclcprof: nothing\
		    sampled</title></head><body><p>Nothing was sampled:\
		    the program did not run Tcl or C code on the\
		    [HtmlText [dict get $profile meta clock]] clock while it\
		    was profiled (an idle program samples nothing on the\
		    cpu clock; try clock=wall).</p></body></html>\n"
	}
    }
    if {$format eq "pprof"} {
	return [list 200 $out [list Content-Type application/octet-stream \
		Content-Disposition {attachment; filename="profile"}]]
    }
    return [list 200 [encoding convertto utf-8 $out] \
	    {Content-Type {text/html; charset=utf-8}}]
}

# EmptyPprof --
#	The pprof export of a profile that sampled nothing: its tree with a
#	root of weight 0 is refused by export, so one sample of weight 0
#	on no frame stands in (go tool pprof shows an empty profile).

proc ::tclcprof::servelib::EmptyPprof {profile {view {}}} {
    dict set profile tree [dict create name {} kind root self 0 total 0 \
	    children {}]
    ::tclcprof::exportlib::Pprof [dict create meta [dict get $profile meta] \
	    exact 0 fid 0 fname {{}} fkind root self 0 fig {{}} kids {{}} \
	    node [list [dict get $profile tree]] fnode {0}] $profile $view
}

# Respond --
#	Write a response and close the connection once it is written. A
#	body that is text (an error's) goes as UTF-8 plain text unless the
#	headers give a Content-Type; a HEAD request gets the headers only.

proc ::tclcprof::servelib::Respond {sock code body headers head} {
    variable reasons
    variable conns

    if {![dict exists $headers Content-Type]} {
	dict set headers Content-Type {text/plain; charset=utf-8}
	set body [encoding convertto utf-8 $body]
    }
    set out "HTTP/1.1 $code [dict get $reasons $code]\r\n"
    dict set headers Content-Length [string length $body]
    dict set headers Connection close
    dict set headers Cache-Control no-store
    dict set headers X-Content-Type-Options nosniff
    dict for {k v} $headers {
	append out "$k: $v\r\n"
    }
    append out "\r\n"
    if {!$head} {
	append out $body
    }
    if {[dict exists $conns $sock]} {
	after cancel [dict get $conns $sock timer]
	dict unset conns $sock
    }
    catch {chan event $sock readable {}}
    catch {
	chan configure $sock -translation binary
	puts -nonewline $sock $out
	flush $sock
    }
    catch {close $sock}
}

# Index --
#	The page of /debug/pprof/.

proc ::tclcprof::servelib::Index {} {
    variable collecting
    variable maxSeconds
    variable defaultSeconds

    # (The server's thread knows its own requests only: whether the
    # program profiles on its own, a profile request finds out.)
    if {[dict size $collecting]} {
	set state "collecting a profile for a request"
    } else {
	set state idle
    }
    set page "<!DOCTYPE html>
<html lang=\"en\"><head><meta charset=\"utf-8\"><title>/debug/pprof/</title>
<style>body { font: 14px sans-serif; margin: 1em 2em; } td { padding: 2px 1em 2px 0; vertical-align: top; }</style>
</head><body>
<h1>/debug/pprof/</h1>
<p>tclcprof [HtmlText [package present tclcprof]] in process [pid]: [HtmlText $state]</p>
<table>
<tr><td><a href=\"profile?seconds=$defaultSeconds\">profile</a></td><td>A CPU profile of
the next <i>seconds</i> (default $defaultSeconds, at most $maxSeconds) as gzipped
profile.proto, for <code>go tool pprof</code>, Pyroscope and Parca.
Parameters: <code>seconds</code>, and the sampling options of
<code>tclcprof::start</code> <code>rate</code>, <code>clock</code>
(cpu, wall), <code>native</code> (user, all, none) and <code>lines</code>
(1: the source lines of Tcl procedures and C functions, for <code>go tool
pprof -lines</code>).</td></tr>
<tr><td><a href=\"/tclcprof/flame?seconds=$defaultSeconds\">/tclcprof/flame</a></td><td>The
same profile as an interactive flame graph page.</td></tr>
<tr><td><a href=\"heap?seconds=$defaultSeconds\">heap</a>, allocs</td><td>A memory
profile of the next <i>seconds</i> (<code>-mode memory</code>): what was
allocated and what is still live at the end, by Tcl and C stack, with
Go's sample types (<code>go tool pprof -sample_index=inuse_space</code>).
Parameters: <code>seconds</code>, <code>memrate</code> (bytes between
samples, on average), <code>native</code> and <code>lines</code> (1: C
source lines).</td></tr>
</table>
<p>Without <code>seconds</code>, heap and allocs answer at once with
the memory profile of the program's own run of <code>-mode memory</code>
(since it started), or 409 when it runs none.</p>
<p>One profile at a time; requests meanwhile, and while the program
profiles on its own, are answered 409 Conflict. A request never
replaces the program's own latest profile.</p>
</body></html>
"
    return [encoding convertto utf-8 $page]
}

# HtmlText --
#	A string as HTML text.

proc ::tclcprof::servelib::HtmlText {s} {
    string map {& &amp; < &lt; > &gt; \" &quot;} $s
}

# When the package is removed (namespace delete ::tclcprof), the server
# goes with it: the deletion of ::tclcprof::servelib::Server (cmdserve.c)
# ends the server's thread.
