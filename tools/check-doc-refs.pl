#!/usr/bin/perl
# Every reference to the project's docs must land on a file and a section that exist.
#
#   docs/NAME.md                 the file must exist
#   docs/NAME.md §3.2, §3.3      ... and each numbered heading ("### 3.2 ...") in it
#   §5.4 alone                   in docs/*.md: a section of that same page; elsewhere: of the
#                                docs file named last before it in the same file
#   [text](path#anchor) in .md   a relative link: the file, and the heading the anchor names
#
# Names of documents that are not in the tree (the old working pages) are errors too.
# Usage: tools/check-doc-refs.pl [FILE...]  (default: the project's sources and docs)
#        tools/check-doc-refs.pl --self-test  (each kind of dangling reference must be caught)
use strict;
use warnings;
use File::Temp qw(tempdir);

if (@ARGV && $ARGV[0] eq '--self-test') {
	my $dir = tempdir(CLEANUP => 1);
	my %cases = (
		'dangling section' => "/* docs/formats.md §9.9 */\n",
		'second section of a run' => "/* docs/formats.md §2.1, §9.9 */\n",
		'missing file' => "/* docs/nothing.md */\n",
		'lone section, no file before' => "/* §2.1 */\n",
		'lone section, wrong file before' => "/* docs/compat.md §2 */\n/* §5.5 */\n",
		'old document name' => "/* DESIGN.md */\n",
		'broken link' => "[x](docs/nothing.md)\n",
		'broken anchor' => "# A heading\n[x](#no-such-heading)\n",
	);
	my $missed = 0;
	for my $name (sort keys %cases) {
		my $f = "$dir/case" . ($name =~ /link|anchor/ ? '.md' : '.c');
		open(my $fh, '>', $f) or die "$f: $!";
		print $fh $cases{$name};
		close $fh;
		if (system("$0 '$f' >/dev/null 2>&1") == 0) {
			print STDERR "check-doc-refs: self-test: a $name was not caught\n";
			$missed++;
		}
	}
	exit 1 if $missed;
	print "check-doc-refs: self-test: all ", scalar(keys %cases), " kinds of dangling reference are caught\n";
	exit 0;
}

my @dirs = qw(include tests sim bench tools examples docs man);
my $text = qr/\.(?:c|h|def|md|sh|pl|awk|mk|gp|txt|in|[0-9])$|(?:^|\/)(?:Makefile|fvsim-run)$/;
my $num = qr/[0-9]+(?:\.[0-9]+)*/;
my $run = qr/(?:[\s`]*(?:,|and|to|-|\/)?[\s`]*§$num)*/;	# the sections after a file name

sub files {
	my @f = ('README.md', 'Makefile');
	for my $d (@dirs) {
		next unless -d $d;
		open(my $fh, '-|', 'find', $d, '-type', 'f') or die "find: $!";
		push @f, grep { chomp; $_ =~ $text && $_ !~ m{^tests/vectors/|^tools/check-doc-refs} } <$fh>;
		close $fh;
	}
	return sort @f;
}

my (%sections, %anchors);	# per docs file: numbered headings, heading anchors

sub load {
	my ($path) = @_;
	return 1 if $sections{$path};
	open(my $fh, '<', $path) or return 0;
	my (%s, %a);
	my $fence = 0;
	while (<$fh>) {
		$fence = !$fence if /^```/;
		next if $fence || !/^#{1,6}\s+(.*?)\s*$/;
		my $h = $1;
		$s{$1} = 1 if $h =~ /^($num)\.?\s/;
		(my $slug = lc $h) =~ s/[^a-z0-9 _-]//g;
		$slug =~ s/ /-/g;
		$a{$slug} = 1;
	}
	$sections{$path} = \%s;
	$anchors{$path} = \%a;
	return 1;
}

my ($refs, $bad) = (0, 0);

sub fail {
	my ($where, $msg) = @_;
	print STDERR "$where: $msg\n";
	$bad++;
}

sub check_section {
	my ($where, $doc, $sec) = @_;
	$refs++;
	return fail($where, "$doc does not exist") unless load($doc);
	fail($where, "$doc has no section $sec") unless $sections{$doc}{$sec};
}

for my $file (@ARGV ? @ARGV : files()) {
	open(my $fh, '<', $file) or die "$file: $!";
	my $self = $file =~ m{^docs/[^/]+\.md$} ? $file : undef;
	my $last = $self;	# the docs file a lone § refers to
	while (my $line = <$fh>) {
		my $where = "$file:$.";
		fail($where, "names $1, which is not in the tree: use docs/") if
			$line =~ /\b(DESIGN\.md|mlx5-formats\.md|libmlx5-behaviour\.md|uverbs-emulation\.md)/;
		# docs/NAME.md with the run of sections after it
		while ($line =~ /\bdocs\/([A-Za-z0-9_.-]+\.md)($run)/g) {
			my ($doc, $list) = ("docs/$1", $2);
			$last = $doc unless $self;
			if (!load($doc) || $list !~ /§/) {
				$refs++;
				fail($where, "$doc does not exist") unless load($doc);
				next;
			}
			check_section($where, $doc, $1) while $list =~ /§($num)/g;
		}
		# lone section signs: what is left once those runs are taken out
		(my $rest = $line) =~ s/\bdocs\/[A-Za-z0-9_.-]+\.md$run//g;
		while ($rest =~ /§($num)?/g) {
			my $sec = $1;
			if (!defined $sec) {
				fail($where, "a section sign without a section number");
			} elsif (!$last) {
				fail($where, "§$sec, but no docs file is named before it");
			} else {
				check_section($where, $last, $sec);
			}
		}
		# relative Markdown links
		next unless $file =~ /\.md$/;
		while ($line =~ /\]\(([^)\s]+)\)/g) {
			my $target = $1;
			next if $target =~ /^[a-z]+:/;
			my ($path, $anchor) = split /#/, $target, 2;
			(my $dir = $file) =~ s{[^/]*$}{};
			$path = $path eq '' ? $file : "$dir$path";
			1 while $path =~ s{(^|/)(?!\.\./)[^/]+/\.\./}{$1};
			$refs++;
			if (!-e $path) {
				fail($where, "link to $path, which does not exist");
			} elsif (defined $anchor && $path =~ /\.md$/) {
				load($path);
				fail($where, "link to $path#$anchor: no such heading") unless $anchors{$path}{$anchor};
			}
		}
	}
	close $fh;
}

if ($bad) {
	print STDERR "check-doc-refs: $bad dangling reference(s)\n";
	exit 1;
}
print "check-doc-refs: $refs references to docs/ and Markdown links resolve\n";
