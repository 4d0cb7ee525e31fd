"""How the command lines speak and draw, shared by the front ends and the benchmarks: the
one-line voice in the system's language (``terminal``) and the figures ``attnviz render`` draws
(``figures``)."""
