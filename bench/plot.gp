# The bench plot: instructions per WR (posting, the application-shaped loops, 1 and 32 WRs per
# doorbell, the floor as the last bar) and per completion (polling, one QP's CQ and a shared
# one), bars per path, values on the bars. bench/run.sh calls it with
#   gnuplot -e "dat='PREFIX'; out='FILE.png'; subtitle='...'" bench/plot.gp
# reading PREFIX.post1, PREFIX.post32 and PREFIX.poll (written by bench/table.awk).

set terminal pngcairo size 1500,1450 font "DejaVu Sans,12" noenhanced
set output out
set datafile separator whitespace
set key autotitle columnheader
set style data histograms
set style histogram clustered gap 1.4
set style fill solid 0.9 border rgb "#404040"
set boxwidth 0.9
set grid ytics lc rgb "#d0d0d0"
set key top right horizontal font ",11" samplen 2 spacing 1.1 maxrows 1
set xtics nomirror scale 0 font ",12"
set ytics nomirror
set border 3
set ylabel "instructions per WR"
set yrange [0:*]
set offsets 0, 0, graph 0.16, 0

c1 = "#9a9a9a"; c2 = "#4f81bd"; c3 = "#f0a030"; c4 = "#3a9a3a"; c5 = "#303030"
# centre of bar i in cluster x: 4 bars, gap 1.4 -> box width 1/5.4; 5 bars -> 1/6.4
bx(x, i) = x + (i - 2.5) / 5.4
bx5(x, i) = x + (i - 3) / 6.4
lbl(v) = v == v ? sprintf("%.0f", v) : ""

set multiplot layout 3,1 title "fastverbs vs libmlx5: instructions (valgrind callgrind), lower is better\n" . subtitle font ",15"

set title "Posting, 1 WR per doorbell, each WR different (per WR)" font ",13"
plot dat.".post1" using 2:xtic(1) lc rgb c1, \
     '' using 3 lc rgb c2, \
     '' using 4 lc rgb c3, \
     '' using 5 lc rgb c4, \
     '' using 6 lc rgb c5, \
     '' using (bx5($0, 1)):2:(lbl($2)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle, \
     '' using (bx5($0, 2)):3:(lbl($3)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle, \
     '' using (bx5($0, 3)):4:(lbl($4)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle, \
     '' using (bx5($0, 4)):5:(lbl($5)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle, \
     '' using (bx5($0, 5)):6:(lbl($6)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle

set title "Posting, 32 WRs per doorbell, each WR different (per WR)" font ",13"
plot dat.".post32" using 2:xtic(1) lc rgb c1, \
     '' using 3 lc rgb c2, \
     '' using 4 lc rgb c3, \
     '' using 5 lc rgb c4, \
     '' using 6 lc rgb c5, \
     '' using (bx5($0, 1)):2:(lbl($2)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle, \
     '' using (bx5($0, 2)):3:(lbl($3)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle, \
     '' using (bx5($0, 3)):4:(lbl($4)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle, \
     '' using (bx5($0, 4)):5:(lbl($5)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle, \
     '' using (bx5($0, 5)):6:(lbl($6)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle

set title "Polling RC completions: one QP, and 4 QPs on one CQ (per completion)" font ",13"
set ylabel "instructions per completion"
plot dat.".poll" using 2:xtic(1) lc rgb c1, \
     '' using 3 lc rgb c2, \
     '' using 4 lc rgb c3, \
     '' using 5 lc rgb c4, \
     '' using (bx($0, 1)):2:(lbl($2)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle, \
     '' using (bx($0, 2)):3:(lbl($3)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle, \
     '' using (bx($0, 3)):4:(lbl($4)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle, \
     '' using (bx($0, 4)):5:(lbl($5)) with labels rotate by 90 left offset 0, 0.3 font ",10" notitle

unset multiplot
