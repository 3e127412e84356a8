function mpc = pf6
%PF6  Synthetic 6-bus power-flow case for stardiff's tests (written for stardiff, public domain).
%   Arbitrary bus numbers, a transformer with tap and phase shift, bus shunts, a generator at
%   a PQ bus, an out-of-service generator and branch, a line continuation, two rows on one
%   line, a cell array with quotes, ';' and '%' inside strings.

%% MATPOWER Case Format : Version 2
mpc.version = '2';

%% system MVA base
mpc.baseMVA = 100;

%% bus data
%	bus_i	type	Pd	Qd	Gs	Bs	area	Vm	Va	baseKV	zone	Vmax	Vmin
mpc.bus = [
	10	3	0	0	0	0	1	1.02	0	230	1	1.1	0.9;
	20	2	20	10	0	0	1	1	0	230	1	1.1	0.9;
	35	1	90	30	0	19	1	1	0	230	1	1.1	0.9;
	40	1	100	35	5	0	1	1	0	230	1	1.1	0.9; 57	1	60	20	0	0	1	1	0	230	1	1.1	0.9
	60	2	0	0	0	0	1	1	0	230	1	1.1	0.9;
];

%% generator data
%	bus	Pg	Qg	Qmax	Qmin	Vg	mBase	status	Pmax	Pmin
mpc.gen = [
	10	0	0	300	-300	1.02	100	1	250	10;
	20	120	0	60	-30	1.01	100	1	300	10;
	60	80	0	25	-50	1.015	100	1	270	10;
	60	0	0	10	-5	1.015	100	1	50	0;	% second generator at bus 60: Q shared by range
	35	10	5	20	-20	1	100	1	50	0;	% a generator at a PQ bus: fixed injection
	57	50	0	50	-50	1.0	100	0	50	0;	% out of service
];

%% branch data
%	fbus	tbus	r	x	b	rateA	rateB	rateC	ratio	angle	status
mpc.branch = [
	10	35	0.01	0.085	0.176	250	250	250	0	0	1;
	10	40	0.017	0.092	0.158	250	250	250	0	0	1;
	35	20	0	0.0586	0	300	300	300	0.98	0	1;
	40	57	0.039	0.17	0.358	150	150	150	0	0	1;
	57	60	0.0119	0.1008	0.209	150	150	150	1.02	3	1;
	20	40	0.0085	0.072	0.149	250	250	250	0	0	1;
	35	57	0.032 ...  (continued)
		0.161	0.306	250	250	250	0	0	1;
	60	10	0.01	0.1	0.1	250	250	250	0	0	0;	% out of service
];

mpc.gencost = [
	2	0	0	3	0.11	5	150;
	2	0	0	3	0.085	1.2	600;
	2	0	0	3	0.1225	1	335;
	2	0	0	3	0.1	1	100;
	2	0	0	3	0.1	1	100;
	2	0	0	3	0.1	1	100;
];

mpc.bus_name = {
	'ten; ''quoted'' % not a comment';
	'twenty';
};
