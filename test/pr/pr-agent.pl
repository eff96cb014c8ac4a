#!/usr/bin/perl
# A command agent for the resolve tests (SPEC 20.4, on a pull request and on the base).
# Perl, not node: a node start costs ~50 ms of CPU here, perl ~3 ms (docs/testing.md).
# PR_AGENT_GATE / PR_AGENT_GATE_BEAD: that bead's implementation writes <gate>.waiting and waits for the gate file.
# Every call appends {action, bead, env_action, cwd, log, tracker} to $PR_AGENT_LOG (`log`: the
# first line of .helix/land-check.log when there is one; `tracker`: the bead's status in
# DDX_BEAD_DIR's tracker).
#  - implementation: writes shared.txt = "<bead>" (so two beads' changes conflict outside the
#    tracker), commits, closes the bead with the real CLI ($FLEET_HELIX).
#  - resolve: PR_AGENT_RESOLVE=none does nothing; =hang never ends (a helix killed mid-resolve). Otherwise a rebase in progress is finished by
#    keeping both sides of every conflict block (`git rebase --continue` until done); with no
#    rebase in progress (a failing check) it commits fix.txt.
#  - anything else: NEXT_ACTION: STOP.
my $prompt = do { local $/; binmode STDIN; <STDIN> // '' };
my ($first) = split /\n/, $prompt, 2;
$first //= '';
my $bead = $ENV{HELIX_BEAD_ID} // '';
@ENV{qw(GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_EDITOR)} = ('agent', 'agent@example.com', 'agent', 'agent@example.com', 'true');

# git's stdout, trimmed; a failure ends the agent with exit 1 (git's stderr is the agent's)
sub git {
  open my $fh, '-|', 'git', @_ or die "pr-agent: git: $!\n";
  local $/;
  my $out = <$fh> // '';
  close $fh;
  if ($?) { print STDERR "pr-agent: git @_ failed\n"; exit 1 }
  $out =~ s/^\s+|\s+$//g;
  return $out;
}
sub slurp { open my $fh, '<', $_[0] or return undef; local $/; my $s = <$fh>; $s }
sub spew { open my $fh, '>', $_[0] or die "pr-agent: $_[0]: $!\n"; print $fh $_[1]; close $fh }
my %esc = ('"' => '\\"', '\\' => '\\\\', "\n" => '\\n', "\r" => '\\r', "\t" => '\\t', "\b" => '\\b', "\f" => '\\f');
sub jstr { my $s = shift; return 'null' unless defined $s; $s =~ s/(["\\\x00-\x1f])/$esc{$1} \/\/ sprintf('\\u%04x', ord $1)/ge; "\"$s\"" }

my $action = $first =~ /resolve action/i ? 'resolve' : $first =~ /implementation/i ? 'implementation' : 'other';
my $check_log = slurp('.helix/land-check.log');
my $log = defined $check_log ? (split /\n/, $check_log, 2)[0] // '' : undef;
# the bead's status in the tracker the agent was given (DDX_BEAD_DIR): its first line with that id
my $tracker;
if ($ENV{DDX_BEAD_DIR} && defined(my $beads = slurp("$ENV{DDX_BEAD_DIR}/beads.jsonl"))) {
  for (split /\n/, $beads) {
    next unless /"id"\s*:\s*"\Q$bead\E"/;
    $tracker = /"status"\s*:\s*"((?:[^"\\]|\\.)*)"/ ? $1 : undef;
    last;
  }
}
my $cwd = readlink('/proc/self/cwd') // $ENV{PWD};
if ($ENV{PR_AGENT_LOG}) {
  open my $fh, '>>', $ENV{PR_AGENT_LOG} or die "pr-agent: $ENV{PR_AGENT_LOG}: $!\n";
  print $fh '{"action":' . jstr($action) . ',"bead":' . jstr($bead) . ',"env_action":' . jstr($ENV{HELIX_ACTION}) . ',"cwd":' . jstr($cwd)
    . ',"log":' . jstr($log) . ',"tracker":' . jstr($tracker) . "}\n";
  close $fh;
}
$| = 1;

if ($action eq 'implementation' && $bead ne '') {
  # PR_AGENT_GATE_BEAD waits for the file PR_AGENT_GATE (the test merges another change meanwhile)
  if ($ENV{PR_AGENT_GATE} && $bead eq ($ENV{PR_AGENT_GATE_BEAD} // '')) {
    spew("$ENV{PR_AGENT_GATE}.waiting", '');
    my $until = time + 60;
    select undef, undef, undef, 0.05 while !-e $ENV{PR_AGENT_GATE} && time < $until;
  }
  spew('shared.txt', "$bead\n");
  git('add', 'shared.txt');
  git('commit', '-q', '-m', "work on $bead");
  {
    local $ENV{NODE_ENV} = 'production';
    system('node', $ENV{FLEET_HELIX}, 'tracker', 'close', $bead) == 0 or exit 1;
  }
  print "closed $bead\n";
} elsif ($action eq 'resolve') {
  exit 0 if ($ENV{PR_AGENT_RESOLVE} // '') eq 'none';
  if (($ENV{PR_AGENT_RESOLVE} // '') eq 'hang') { select undef, undef, undef, 0.2 while 1 }
  my $in_rebase = sub { -e git('rev-parse', '--git-path', 'rebase-merge') || -e git('rev-parse', '--git-path', 'rebase-apply') };
  if ($in_rebase->()) {
    for (my $i = 0; $i < 20 && $in_rebase->(); $i++) {
      for my $f (grep { length } split /\n/, git('diff', '--name-only', '--diff-filter=U')) {
        spew($f, join "\n", grep { !/^(?:<<<<<<< |=======|>>>>>>> )/ } split /\n/, slurp($f), -1);
        git('add', '--', $f);
      }
      # its output is not the agent's (the node agent captured and dropped it)
      my $pid = fork // die "pr-agent: fork: $!\n";
      if (!$pid) { open STDOUT, '>', '/dev/null'; open STDERR, '>', '/dev/null'; exec 'git', 'rebase', '--continue'; exit 127 }
      waitpid $pid, 0;
    }
    print "resolved the conflict\n";
  } else {
    spew('fix.txt', "the check passes now\n");
    git('add', 'fix.txt');
    git('commit', '-q', '-m', "fix the check of $bead");
    print "fixed the check\n";
  }
} else {
  print "NEXT_ACTION: STOP\n";
}
