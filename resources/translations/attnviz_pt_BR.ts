<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="pt_BR" sourcelanguage="en">
<context>
    <name>Capture</name>
    <message>
        <source>{call} recorded its weights only: it has no scores to compute</source>
        <extracomment>Tensors already converted to numpy, by (id of the tensor they come from, shape, dtype). Recomputations larger than this (their weights, in bytes) are done one batch element at a time. id of the innermost module that made the call (a softmax there is not a call of its own). The positions the model&apos;s rotary (or learned position) embedding was last called with before this call, (N, L) (``recorded_positions``), and which kind of module read them.</extracomment>
        <translation>{call} registrou apenas seus pesos: não há escores a calcular</translation>
    </message>
    <message>
        <source>dropout (p = {p}) was applied: the model&apos;s output is random and was not compared</source>
        <translation>o dropout (p = {p}) foi aplicado: a saída do modelo é aleatória e não foi comparada</translation>
    </message>
    <message>
        <source>not recomputed: {reason}</source>
        <translation>sem recálculo: {reason}</translation>
    </message>
    <message>
        <source>the heads&apos; output is attnviz&apos;s recomputation (nn.MultiheadAttention with need_weights=True returns it only after its output projection, where it was compared)</source>
        <translation>a saída das cabeças é o recálculo do attnviz (nn.MultiheadAttention com need_weights=True só a devolve depois da sua projeção de saída, onde ela foi comparada)</translation>
    </message>
    <message>
        <source>every key of {rows} query row(s) is masked: the model&apos;s softmax gives NaN there, as computed (SDPA&apos;s kernel gives zeros); later layers carry the NaN on</source>
        <translation>toda chave de {rows} linha(s) de consultas está mascarada: o softmax do modelo dá NaN ali, como calculado (o kernel do SDPA dá zeros); as camadas seguintes levam o NaN adiante</translation>
    </message>
    <message>
        <source>{first}; {second}</source>
        <translation>{first}; {second}</translation>
    </message>
    <message>
        <source>no TransformerLens attention hooks found (blocks.0.attn.hook_q, hook_k, hook_v, hook_pattern)</source>
        <translation>nenhum hook de atenção do TransformerLens encontrado (blocks.0.attn.hook_q, hook_k, hook_v, hook_pattern)</translation>
    </message>
    <message>
        <source>{name}: the cache holds neither hook_q, hook_k and hook_v nor hook_pattern</source>
        <translation>{name}: o cache não contém nem hook_q, hook_k e hook_v, nem hook_pattern</translation>
    </message>
    <message>
        <source>attention pattern only (hook_pattern, the model&apos;s own weights): queries, keys and values were not cached</source>
        <translation>apenas o padrão de atenção (hook_pattern, os pesos do próprio modelo): consultas, chaves e valores não foram guardados no cache</translation>
    </message>
    <message>
        <source>{type} is not a TransformerLens model (no run_with_cache): use attnviz.capture(model)</source>
        <translation>{type} não é um modelo do TransformerLens (não tem run_with_cache): use attnviz.capture(model)</translation>
    </message>
    <message>
        <source>rotary from hook_rot_q/hook_rot_k</source>
        <translation>rotary de hook_rot_q/hook_rot_k</translation>
    </message>
    <message>
        <source>a rotary model whose cache holds no hook_rot_q/hook_rot_k, and no model to rotate them with (pass model=)</source>
        <translation>um modelo rotary cujo cache não tem hook_rot_q/hook_rot_k, e nenhum modelo para rotacioná-los (passe model=)</translation>
    </message>
    <message>
        <source>rotary applied as the model applies it</source>
        <translation>rotary aplicado como o modelo o aplica</translation>
    </message>
    <message>
        <source>padding keys not masked, as the model does not mask them</source>
        <translation>chaves de preenchimento não mascaradas, pois o modelo não as mascara</translation>
    </message>
    <message>
        <source>soft-capping</source>
        <translation>soft-capping</translation>
    </message>
    <message>
        <source>ALiBi</source>
        <translation>ALiBi</translation>
    </message>
    <message>
        <source>a local window of {n}</source>
        <translation>uma janela local de {n}</translation>
    </message>
    <message>
        <source>sinks</source>
        <translation>sinks</translation>
    </message>
    <message>
        <source>recomputing from hook_q, hook_k and hook_v differs by {value:.3g}</source>
        <translation>o recálculo a partir de hook_q, hook_k e hook_v difere em {value:.3g}</translation>
    </message>
    <message>
        <source>the model&apos;s own weights (hook_pattern), not recomputed: {why}</source>
        <translation>os pesos do próprio modelo (hook_pattern), não recalculados: {why}</translation>
    </message>
    <message>
        <source>not exact: {why}</source>
        <translation>não exato: {why}</translation>
    </message>
    <message>
        <source>recomputed from hook_q, hook_k, hook_v ({how}), checked against {hook}</source>
        <translation>recalculado a partir de hook_q, hook_k, hook_v ({how}), conferido com {hook}</translation>
    </message>
    <message>
        <source>no score terms</source>
        <translation>sem termos de pontuação</translation>
    </message>
    <message>
        <source>output_attentions must be the tuple of per-layer weight tensors the model returned (outputs.attentions): run the model with output_attentions=True and attn_implementation=&quot;eager&quot;</source>
        <translation>output_attentions deve ser a tupla de tensores de pesos por camada que o modelo devolveu (outputs.attentions): execute o modelo com output_attentions=True e attn_implementation=&quot;eager&quot;</translation>
    </message>
    <message>
        <source>{names} names for {layers} layers</source>
        <translation>{names} nomes para {layers} camadas</translation>
    </message>
    <message>
        <source>attention weights only (output_attentions): queries, keys, values, masks and the output were not recorded, so nothing can be recomputed or edited</source>
        <translation>só os pesos de atenção (output_attentions): consultas, chaves, valores, máscaras e a saída não foram registrados, então nada pode ser recalculado nem editado</translation>
    </message>
    <message>
        <source>layer {index}</source>
        <translation>camada {index}</translation>
    </message>
    <message>
        <source>{name} holds no weights (None): was the model run with output_attentions=True?</source>
        <translation>{name} não contém pesos (None): o modelo foi executado com output_attentions=True?</translation>
    </message>
    <message>
        <source>{name} was replaced by other code while captures were open: it is left as that code set it</source>
        <extracomment>What the patch asks of an open capture (``recorder.Capture`` provides it): the one small interface between the paths&apos; wrappers and the recorder, so this module never imports it. The open captures, replaced whole under the lock (readers take it without locking). Edits of calls as they run (``attnviz.intervene``), replaced whole under the lock. Where the angles of the latest position reading went (sinusoids joined, or not).</extracomment>
        <translation>{name} foi substituído por outro código enquanto havia capturas abertas: fica como esse código o deixou</translation>
    </message>
    <message>
        <source>capture(model): model must be a torch.nn.Module, not {type}</source>
        <translation>capture(model): model deve ser um torch.nn.Module, não {type}</translation>
    </message>
    <message>
        <source>memory_budget must be a number of bytes &gt; 0; got {value}</source>
        <translation>memory_budget deve ser um número de bytes &gt; 0; recebeu {value}</translation>
    </message>
    <message>
        <source>sharding must be None, {choices}; got {value}</source>
        <translation>sharding deve ser None, {choices}; recebido {value}</translation>
    </message>
    <message>
        <source>a capture records once: make a new one with attnviz.capture(...)</source>
        <extracomment>Modules that turn positions into rotations or embeddings, and the latest positions one was called with (kind, (N, L)): the calls that follow were given them. The softmax call whose values&apos; grouping was read (the products after it are others).</extracomment>
        <translation>uma captura registra uma única vez: crie outra com attnviz.capture(...)</translation>
    </message>
    <message>
        <source>{n} attention call was not recorded (memory budget)</source>
        <translation>{n} chamada de atenção não foi registrada (orçamento de memória)</translation>
    </message>
    <message>
        <source>{n} attention calls were not recorded (memory budget)</source>
        <translation>{n} chamadas de atenção não foram registradas (orçamento de memória)</translation>
    </message>
    <message>
        <source>no attention call was recorded: the model called neither torch.nn.functional.scaled_dot_product_attention, nn.MultiheadAttention, a transformers attention function, flex_attention nor a softmax over attention scores inside its modules (a model compiled with torch.compile cannot be captured)</source>
        <translation>nenhuma chamada de atenção foi registrada: o modelo não chamou torch.nn.functional.scaled_dot_product_attention, nn.MultiheadAttention, uma função de atenção do transformers, flex_attention nem um softmax sobre escores de atenção dentro de seus módulos (um modelo compilado com torch.compile não pode ser capturado)</translation>
    </message>
    <message>
        <source>{name} is left out of the run: queries {q}, keys {k} are not (batch, heads, length, size)</source>
        <translation>{name} fica fora da execução: consultas {q}, chaves {k} não são (lote, cabeças, comprimento, tamanho)</translation>
    </message>
    <message>
        <source>nothing was captured: there is no attention call to show</source>
        <translation>nada foi capturado: não há chamada de atenção para mostrar</translation>
    </message>
    <message>
        <source>the tokens given do not fit every axis of {count} call(s) ({first}...): those axes are shown without tokens (each call&apos;s note says which)</source>
        <translation>os tokens dados não cabem em todos os eixos de {count} chamada(s) ({first}...): esses eixos são mostrados sem tokens (a nota de cada chamada diz quais)</translation>
    </message>
    <message>
        <source>its {length} {axis}</source>
        <translation>seus {length} {axis}</translation>
    </message>
    <message>
        <source>the tokens given do not fit {axes}: shown without tokens there</source>
        <translation>os tokens dados não cabem em {axes}: mostrados sem tokens ali</translation>
    </message>
    <message>
        <source>modules= names modules of a model: pass the model too, capture(model, modules=...)</source>
        <translation>modules= nomeia módulos de um modelo: passe também o modelo, capture(model, modules=...)</translation>
    </message>
    <message>
        <source>modules: a {type} that is not part of the model</source>
        <translation>modules: um {type} que não faz parte do modelo</translation>
    </message>
    <message>
        <source>modules: {pattern} names no module of the model</source>
        <translation>modules: {pattern} não nomeia nenhum módulo do modelo</translation>
    </message>
    <message>
        <source>{text} on a GPU; on the CPU flex_attention computed every block: {share}% of blocks, which its block table skips and its mask_mod ({name}) allows, are computed and shown here (block sparsity that is not in the mask_mod is ignored on the CPU)</source>
        <translation>{text} em uma GPU; na CPU o flex_attention calculou todos os blocos: {share}% dos blocos, que sua tabela de blocos pula e seu mask_mod ({name}) permite, são calculados e mostrados aqui (a esparsidade de blocos que não está no mask_mod é ignorada na CPU)</translation>
    </message>
    <message>
        <source>{text} on a GPU; on the CPU flex_attention computed every block, so only its mask_mod masks (as recorded)</source>
        <translation>{text} numa GPU; na CPU o flex_attention calculou todos os blocos, então só o seu mask_mod mascara (como gravado)</translation>
    </message>
    <message>
        <source>call {index}</source>
        <extracomment>Bytes of copies a capture keeps by default (never more than half the memory available). The sharding a capture can be told (or sees): data-parallel ranks hold other batch elements, tensor-parallel ranks other heads.</extracomment>
        <translation>chamada {index}</translation>
    </message>
    <message>
        <source>a call could not be recorded: {error}</source>
        <translation>não foi possível registrar uma chamada: {error}</translation>
    </message>
    <message>
        <source>a GQA decode step transformers ran with its query heads folded into the query axis: shown unfolded, one query per head</source>
        <translation>um passo de decodificação GQA que o transformers executou com as cabeças de consulta dobradas no eixo das consultas: mostrado desdobrado, uma consulta por cabeça</translation>
    </message>
    <message>
        <source>a boolean mask added to the scores as 0 and 1 by the eager function</source>
        <translation>uma máscara booleana somada aos escores como 0 e 1 pela função eager</translation>
    </message>
    <message>
        <source>a sink logit per query of each head, in the softmax as the model computes it (an extra logit with a zero value: each row&apos;s weights sum to less than 1, as the model reports them)</source>
        <translation>um logit de sorvedouro por consulta de cada cabeça, no softmax como o modelo o calcula (um logit extra de valor zero: os pesos de cada linha somam menos que 1, como o modelo os informa)</translation>
    </message>
    <message>
        <source>sink logits of a shape that is neither one per head nor one per query are not recorded: recomputed without them</source>
        <translation>logits de sorvedouro de uma forma que não é nem um por cabeça nem um por consulta não são gravados: recalculado sem eles</translation>
    </message>
    <message>
        <source>sinks applied after the softmax, as the model does (each row&apos;s output scaled by sigmoid(logsumexp - sink)): the model reports its weights before them, as weights() returns them; the run&apos;s map shows them with the sink&apos;s share (what the output mixes)</source>
        <translation>sorvedouros aplicados depois do softmax, como o modelo faz (a saída de cada linha escalada por sigmoid(logsumexp - sorvedouro)): o modelo informa seus pesos antes deles, como weights() os devolve; o mapa da execução os mostra com a parte do sorvedouro (o que a saída mistura)</translation>
    </message>
    <message>
        <source>sliding window of {window} keys (in the mask the model built)</source>
        <translation>janela deslizante de {window} chaves (na máscara que o modelo construiu)</translation>
    </message>
    <message>
        <source>attention code of its own ({module}): its weights were recorded at its softmax; its queries, keys and values are not visible to a capture (weights only)</source>
        <extracomment>The attribute a swapped function&apos;s wrapper keeps its original under (the function mode runs it). A module&apos;s forward arguments that carry the mask it built (a call seen through its softmax).</extracomment>
        <translation>código de atenção próprio ({module}): seus pesos foram registrados no seu softmax; suas consultas, chaves e valores não são visíveis a uma captura (apenas pesos)</translation>
    </message>
    <message>
        <source>without the capture nn.MultiheadAttention would have taken its fused fast path (which reads a float mask as a boolean one); the capture ran its Python path</source>
        <translation>sem a captura, nn.MultiheadAttention teria tomado seu caminho rápido fundido (que lê uma máscara float como booleana); a captura executou seu caminho em Python</translation>
    </message>
    <message>
        <source>recording stopped at attention call {index}: it needs {need} more and {used} of the {budget} memory budget are taken; pass capture(memory_budget=...) to record more, or modules=... to record fewer calls</source>
        <translation>o registro parou na chamada de atenção {index}: ela precisa de mais {need}, e {used} do orçamento de memória de {budget} já estão ocupados; passe capture(memory_budget=...) para registrar mais, ou modules=... para registrar menos chamadas</translation>
    </message>
    <message>
        <source>FlexAttention block mask: blocks of {rows} x {cols}, {sparsity}% of blocks skipped</source>
        <extracomment>A mask_mod is evaluated cell by cell over at most this many cells (in the skipped blocks its index ranges cannot settle, summed over the table) to tell which it allows; past it the share is not measured.</extracomment>
        <translation>máscara de blocos do FlexAttention: blocos de {rows} x {cols}, {sparsity}% dos blocos pulados</translation>
    </message>
    <message>
        <source>its score_mod does more than add a bias: the file keeps what it did to the recorded scores (an edit of the queries or keys is recomputed without it)</source>
        <extracomment>The dense boolean mask a mask_mod becomes in a file (and a score_mod&apos;s bias) may take at most this. vmap over kv_idx, q_idx, h, b (innermost first), as FlexAttention applies a score_mod.</extracomment>
        <translation>seu score_mod faz mais do que somar um viés: o arquivo guarda o que ele fez com os scores gravados (uma edição das queries ou keys é recalculada sem ele)</translation>
    </message>
    <message>
        <source>its score_mod does more than add a bias and is not kept in the file: recomputed without it</source>
        <translation>seu score_mod faz mais do que somar um viés e não é guardado no arquivo: recalculado sem ele</translation>
    </message>
    <message>
        <source>the mask_mod of call &apos;{name}&apos; would take {size} as the dense mask a file keeps (at most {limit}): record fewer or shorter calls to save them</source>
        <translation>o mask_mod da chamada &apos;{name}&apos; ocuparia {size} como a máscara densa que um arquivo guarda (no máximo {limit}): registre menos chamadas ou chamadas mais curtas para salvá-las</translation>
    </message>
    <message>
        <source>the mask_mod of call &apos;{name}&apos; failed: {error}</source>
        <translation>o mask_mod da chamada &apos;{name}&apos; falhou: {error}</translation>
    </message>
    <message>
        <source>queries of batch 1 broadcast against batch {batch}, as the kernel does</source>
        <translation>consultas de lote 1 difundidas contra o lote {batch}, como o kernel faz</translation>
    </message>
    <message>
        <source>keys and values of batch 1 broadcast against batch {batch}, as the kernel does</source>
        <translation>chaves e valores de lote 1 difundidos contra o lote {batch}, como o kernel faz</translation>
    </message>
    <message>
        <source>queries of 1 head broadcast against {heads} key heads, as the kernel does</source>
        <translation>consultas de 1 cabeça difundidas contra {heads} cabeças de chaves, como o kernel faz</translation>
    </message>
    <message>
        <source>banded attention of its own: each query&apos;s band of {band} keys (window {w} on each side) drawn as the band of its {n} x {n} map (zero outside the band and the global keys)</source>
        <translation>atenção em faixa própria: a faixa de {band} chaves de cada consulta (janela de {w} de cada lado) desenhada como a faixa do seu mapa {n} x {n} (zero fora da faixa e das chaves globais)</translation>
    </message>
    <message>
        <source>{note}; padded query rows zeroed after the softmax, as the model does</source>
        <translation>{note}; linhas de consultas de preenchimento zeradas após o softmax, como o modelo faz</translation>
    </message>
    <message>
        <source>{note}; {count} global key column(s) placed at their positions; the global queries&apos; own rows are the model&apos;s second softmax, over every key</source>
        <translation>{note}; {count} coluna(s) de chaves globais postas nas suas posições; as linhas próprias das consultas globais são o segundo softmax do modelo, sobre todas as chaves</translation>
    </message>
    <message>
        <source>a softmax of its own ({softmax} in {module}): its output was recorded as the weights, as the model computed them (an integer softmax&apos;s rows sum to 1 only up to its rounding); queries, keys and values are not visible to a capture (weights only)</source>
        <translation>um softmax próprio ({softmax} em {module}): sua saída foi registrada como os pesos, como o modelo os calculou (as linhas de um softmax inteiro somam 1 só até o seu arredondamento); consultas, chaves e valores não são visíveis a uma captura (apenas pesos)</translation>
    </message>
    <message>
        <source>self- and cross-attention merged in one softmax: keys 0-{last} are the decoder&apos;s own, the next {cross} the encoder&apos;s; the model reports the two column blocks as two maps (each a part of this one softmax)</source>
        <translation>autoatenção e atenção cruzada fundidas num só softmax: as chaves 0-{last} são do próprio decodificador, as {cross} seguintes do codificador; o modelo informa os dois blocos de colunas como dois mapas (cada um parte deste único softmax)</translation>
    </message>
    <message>
        <source>the function returned its heads&apos; average weights (average_attn_weights=True): a map the model reports from it is that average (in every head, for WavLM); each head here is its own</source>
        <translation>a função devolveu a média dos pesos das suas cabeças (average_attn_weights=True): um mapa que o modelo informa a partir dela é essa média (em todas as cabeças, no WavLM); cada cabeça aqui é a sua própria</translation>
    </message>
    <message>
        <source>block-sparse attention of its own ({module}, blocks of {block}): each query&apos;s softmax over the key blocks it gathers (global, sliding window, {random} random), as the (L, L) map they mean, zero elsewhere; a block gathered twice counts twice (the score term &apos;block repeats&apos;, in eval mode every random block is the first: {repeated} query rows), so rows sum to 1 where the model&apos;s output_attentions keeps it once; the model zeroes padded queries&apos; output after the attention, and its output_attentions keeps, in their rows, the random copies of a block (which its mask zeroes for a padded query) in place of the copy their softmax weighs</source>
        <translation>atenção esparsa em blocos própria ({module}, blocos de {block}): o softmax de cada consulta sobre os blocos de chaves que ela reúne (globais, janela deslizante, {random} aleatório(s)), como o mapa (L, L) que eles significam, zero no resto; um bloco reunido duas vezes conta duas vezes (o termo de pontuação &apos;block repeats&apos;; no modo de avaliação todo bloco aleatório é o primeiro: {repeated} linhas de consultas), então as linhas somam 1 onde o output_attentions do modelo o guarda uma vez só; o modelo zera a saída das consultas de preenchimento depois da atenção, e seu output_attentions guarda, nas linhas delas, as cópias aleatórias de um bloco (que sua máscara zera para uma consulta de preenchimento) no lugar da cópia que o softmax delas pesa</translation>
    </message>
    <message>
        <source>{note}; the model&apos;s function rerun differs from its forward by {gap}</source>
        <translation>{note}; a função do modelo executada de novo difere do seu forward em {gap}</translation>
    </message>
    <message>
        <source>block-sparse attention of its own ({module}, blocks of {block}): the {n} x {n} map the model assembles from its global, sliding-window and {random} random key blocks per query block, zero elsewhere (a random block that repeats one already attended, as in eval mode, is kept once: such rows sum to less than 1 while the output mixes both); its queries, keys and values are not visible to a capture (weights only)</source>
        <translation>atenção esparsa em blocos própria ({module}, blocos de {block}): o mapa {n} x {n} que o modelo monta a partir de seus blocos de chaves globais, da janela deslizante e de {random} bloco(s) aleatório(s) por bloco de consultas, zero no resto (um bloco aleatório que repete um já atendido, como no modo de avaliação, fica uma vez só: essas linhas somam menos que 1 enquanto a saída mistura os dois); suas consultas, chaves e valores não são visíveis a uma captura (só pesos)</translation>
    </message>
    <message>
        <source>local attention of its own ({module}): each chunk of {size} queries over the keys of its chunk, {before} chunk(s) before and {after} after (wrapping around the sequence&apos;s ends where the model&apos;s mask allows), as the (L, L) band they mean, zero elsewhere; its softmax is exp(dots - logsumexp(dots)) in the model&apos;s own code</source>
        <translation>atenção local própria ({module}): cada bloco de {size} consultas sobre as chaves do seu bloco, {before} bloco(s) antes e {after} depois (dando a volta nas pontas da sequência onde a máscara do modelo permite), como a faixa (L, L) que elas significam, zero no resto; seu softmax é exp(dots - logsumexp(dots)) no código do próprio modelo</translation>
    </message>
    <message>
        <source>LSH attention of its own ({module}), hash round {round} of {rounds}: queries and keys (one shared projection, the keys length-normalised) sorted by hash bucket into chunks of {size}, each chunk over its own and {before} chunk(s) before and {after} after, un-sorted back to token order as the (L, L) map it means, zero elsewhere; a token never attends to itself unless it has no other key ({alone} query rows); the model&apos;s output weights each round by its share of the row&apos;s logsumexp</source>
        <translation>atenção LSH própria ({module}), rodada de hash {round} de {rounds}: consultas e chaves (uma projeção compartilhada, as chaves normalizadas em comprimento) ordenadas por balde de hash em blocos de {size}, cada bloco sobre o seu e {before} bloco(s) antes e {after} depois, desordenadas de volta à ordem dos tokens como o mapa (L, L) que significam, zero no resto; um token nunca atende a si mesmo a menos que não tenha outra chave ({alone} linhas de consultas); a saída do modelo pondera cada rodada por sua parte do logsumexp da linha</translation>
    </message>
    <message>
        <source>{note}; a key its softmax gathers twice counts twice (the score term &apos;chunk repeats&apos;: {rows} query rows), where the model&apos;s output_attentions lists each time apart</source>
        <translation>{note}; uma chave que seu softmax reúne duas vezes conta duas vezes (o termo de pontuação &apos;chunk repeats&apos;: {rows} linhas de consultas), onde o output_attentions do modelo lista cada vez à parte</translation>
    </message>
    <message>
        <source>{note}; {rows} query rows have every key they gather masked: in float32 the model&apos;s logsumexp of its fill (-1e9, not -inf) loses the log of their number, so each such key weighs 1 (the row sums to that number, its output their values&apos; sum), drawn as the softmax of their equal scores (the queries of those rows recorded as zeros): 1 over that number each; the output is compared with the model&apos;s as it computes it, that number times the softmax&apos;s</source>
        <translation>{note}; {rows} linhas de consultas têm mascarada toda chave que reúnem: em float32 o logsumexp do modelo sobre seu preenchimento (-1e9, não -inf) perde o log da quantidade delas, então cada uma dessas chaves pesa 1 (a linha soma essa quantidade, sua saída a soma dos valores delas), desenhadas como o softmax das suas pontuações iguais (as consultas dessas linhas gravadas como zeros): 1 sobre essa quantidade cada; a saída é comparada com a do modelo como ele a calcula, essa quantidade vezes a do softmax</translation>
    </message>
    <message>
        <source>{module}: a cached generation step of Reformer&apos;s {kind} attention could not be recorded (its keys are the cached chunk&apos;s, gathered by the model&apos;s cache)</source>
        <translation>{module}: um passo de geração com cache da atenção {kind} do Reformer não pôde ser gravado (suas chaves são as do bloco em cache, reunidas pelo cache do modelo)</translation>
    </message>
    <message>
        <source>global-local attention of its own: each block of {block} queries over the {g} global tokens (the first {g} keys, learned, not in the sequence) and the keys of its block, drawn as the {n} x {width} map they mean (zero outside the block); the sequence as the module gets it, padded to a multiple of the block (and by half a block first in a layer that staggers its blocks)</source>
        <translation>atenção global-local própria: cada bloco de {block} consultas sobre os {g} tokens globais (as primeiras {g} chaves, aprendidas, fora da sequência) e as chaves do seu bloco, desenhada como o mapa {n} x {width} que elas significam (zero fora do bloco); a sequência como o módulo a recebe, preenchida até um múltiplo do bloco (e com meio bloco antes numa camada que escalona seus blocos)</translation>
    </message>
</context>
<context>
    <name>Code</name>
    <message>
        <source>--data {path}: the folder {folder} does not exist</source>
        <extracomment>The frameworks, as ``attnviz.snippets.FRAMEWORKS`` lists them (here without importing it: the parser must answer --help before torch loads). The command lines that end ``--help``.</extracomment>
        <translation>--data {path}: a pasta {folder} não existe</translation>
    </message>
    <message>
        <source>{name}: its arrays are too big to print into the script; give --data FILE to write them to FILE, which the script loads</source>
        <translation>{name}: seus arrays são grandes demais para escrever no script; use --data ARQUIVO para gravá-los em ARQUIVO, que o script carrega</translation>
    </message>
    <message>
        <source>cannot write {path}: {error}</source>
        <translation>não é possível gravar {path}: {error}</translation>
    </message>
    <message>
        <source>the script loads its larger arrays from {path}</source>
        <translation>o script carrega seus arrays maiores de {path}</translation>
    </message>
    <message>
        <source>note: {note}</source>
        <translation>nota: {note}</translation>
    </message>
    <message>
        <source>--data {path}: {error}</source>
        <translation>--data {path}: {error}</translation>
    </message>
</context>
<context>
    <name>Colormaps</name>
    <message>
        <source>unknown colour map {name}; choose one of {choices}</source>
        <translation>mapa de cores desconhecido {name}; escolha um destes: {choices}</translation>
    </message>
</context>
<context>
    <name>CommandLine</name>
    <message>
        <source>{option} {value}: expected {expected}</source>
        <translation>{option} {value}: esperava-se {expected}</translation>
    </message>
    <message>
        <source>{old} is now {new} (the old name still works, for now)</source>
        <translation>{old} agora é {new} (o nome antigo ainda funciona, por enquanto)</translation>
    </message>
    <message>
        <source>unknown preset {name}; choose one of {choices}</source>
        <translation>predefinição desconhecida {name}; escolha uma destas: {choices}</translation>
    </message>
    <message>
        <source>--role applies to tensor files, not captures</source>
        <translation>--role se aplica a arquivos de tensores, não a capturas</translation>
    </message>
    <message>
        <source>--role applies to tensor files, not sessions</source>
        <translation>--role se aplica a arquivos de tensores, não a sessões</translation>
    </message>
    <message>
        <source>--role {item}: expected ROLE=NAME with ROLE one of {roles}</source>
        <translation>--role {item}: esperava-se PAPEL=NOME com PAPEL um destes: {roles}</translation>
    </message>
    <message>
        <source>cannot tell which array is {roles} (arrays: {arrays}); name them with --role {first}=NAME</source>
        <translation>não é possível saber qual array é {roles} (arrays: {arrays}); indique-os com --role {first}=NOME</translation>
    </message>
    <message>
        <source>--layer {layer} is out of range: {name} has {n} layer, 0</source>
        <translation>--layer {layer} está fora do intervalo: {name} tem {n} camada, 0</translation>
    </message>
    <message>
        <source>--layer {layer} is out of range: {name} has {n} layers, 0-{last}</source>
        <translation>--layer {layer} está fora do intervalo: {name} tem {n} camadas, 0-{last}</translation>
    </message>
    <message>
        <source>--head {head} is out of range: layer {layer} of {name} has {n} head, 0</source>
        <translation>--head {head} está fora do intervalo: a camada {layer} de {name} tem {n} cabeça, 0</translation>
    </message>
    <message>
        <source>--head {head} is out of range: layer {layer} of {name} has {n} heads, 0-{last}</source>
        <translation>--head {head} está fora do intervalo: a camada {layer} de {name} tem {n} cabeças, 0-{last}</translation>
    </message>
    <message>
        <source>{error} (see {prog} --help)</source>
        <extracomment>The exit status of a bad command line, in every command.</extracomment>
        <translation>{error} (veja {prog} --help)</translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation>interrompido</translation>
    </message>
    <message>
        <source>unexpected error: {error}</source>
        <translation>erro inesperado: {error}</translation>
    </message>
</context>
<context>
    <name>Compare</name>
    <message>
        <source>compare: {name} must be a capture, a capture file or a ModelRun, not {type}</source>
        <translation>compare: {name} deve ser uma captura, um arquivo de captura ou um ModelRun, não {type}</translation>
    </message>
    <message>
        <source>{name}: (batch, heads, queries, keys) {a} against {b}: nothing compared</source>
        <translation>{name}: (lote, cabeças, consultas, chaves) {a} contra {b}: nada comparado</translation>
    </message>
    <message>
        <source>--tol {value}: expected a number &gt;= 0, e.g. 1e-5</source>
        <extracomment>Two runs of one model on one machine agree exactly; another kernel or batch size, to ~1e-6. The command lines that end ``--help``.</extracomment>
        <translation>--tol {value}: esperado um número &gt;= 0, p. ex. 1e-5</translation>
    </message>
    <message>
        <source>--top {value}: expected a whole number &gt;= 0</source>
        <translation>--top {value}: esperado um número inteiro &gt;= 0</translation>
    </message>
    <message>
        <source>only in {side}: {name}</source>
        <translation>só em {side}: {name}</translation>
    </message>
    <message>
        <source>{n} call</source>
        <translation>{n} chamada</translation>
    </message>
    <message>
        <source>{n} calls</source>
        <translation>{n} chamadas</translation>
    </message>
    <message>
        <source>{count} of {calls} differ by more than {tol:g}, {unmatched} unmatched; the largest weight difference {weights:.3g}, output difference {outputs:.3g}</source>
        <translation>{count} de {calls} diferem em mais de {tol:g}, {unmatched} sem par; a maior diferença de pesos {weights:.3g}, de saída {outputs:.3g}</translation>
    </message>
    <message>
        <source>{count} of {calls} differ by more than {tol:g}, {unmatched} unmatched; the largest weight difference {weights:.3g}; outputs not compared (no call&apos;s outputs were recorded in both runs)</source>
        <translation>{count} de {calls} diferem em mais de {tol:g}, {unmatched} sem par; a maior diferença de pesos {weights:.3g}; saídas não comparadas (nenhuma chamada teve as saídas gravadas nas duas execuções)</translation>
    </message>
    <message>
        <source>the runs agree within {tol:g} in {calls} (largest difference {largest:.3g})</source>
        <translation>as execuções concordam dentro de {tol:g} em {calls} (maior diferença {largest:.3g})</translation>
    </message>
    <message>
        <source>call {index}: {note}</source>
        <extracomment>Run ``attnviz diff`` with ``argv`` (without the word &quot;diff&quot;); returns the exit status. The console script ``attnviz-diff`` (its arguments are the process&apos;s).</extracomment>
        <translation>chamada {index}: {note}</translation>
    </message>
    <message>
        <source>call {index} ({name}): weights differ by up to {weights:.3g} (batch {batch}, head {head}), outputs by up to {outputs:.3g}</source>
        <translation>chamada {index} ({name}): os pesos diferem em até {weights:.3g} (lote {batch}, cabeça {head}), as saídas em até {outputs:.3g}</translation>
    </message>
    <message>
        <source>call {index} ({name}): weights differ by up to {weights:.3g} (batch {batch}, head {head}); outputs not compared (not recorded on both sides)</source>
        <translation>chamada {index} ({name}): os pesos diferem em até {weights:.3g} (lote {batch}, cabeça {head}); saídas não comparadas (não gravadas nos dois lados)</translation>
    </message>
</context>
<context>
    <name>CompareView</name>
    <message>
        <source>Scoring function</source>
        <extracomment>What can differ between A and B: the Settings field and its caption.</extracomment>
        <translation>Função de pontuação</translation>
    </message>
    <message>
        <source>Mask mode</source>
        <translation>Modo de máscara</translation>
    </message>
    <message>
        <source>Dtype</source>
        <translation>Dtype</translation>
    </message>
    <message>
        <source>no result</source>
        <extracomment>Colour-blind-safe diverging map (blue – grey – yellow) bundled with pyqtgraph: the sign of A − B must read at a glance, and the project&apos;s maps are all sequential.</extracomment>
        <translation>sem resultado</translation>
    </message>
    <message>
        <source>The one setting that differs between A and B; everything else is the main window&apos;s</source>
        <extracomment>Document version of the drawn result (-1 before the first). The head the last result shown was of. What is compared: on a slide the lists A and B say it (chrome: the maps need the room).</extracomment>
        <translation>A única configuração que difere entre A e B; todo o resto vem da janela principal</translation>
    </message>
    <message>
        <source>Configuration A</source>
        <translation>Configuração A</translation>
    </message>
    <message>
        <source>Configuration B</source>
        <translation>Configuração B</translation>
    </message>
    <message>
        <source>Swap A and B</source>
        <translation>Trocar A e B</translation>
    </message>
    <message>
        <source>C&amp;ompare</source>
        <translation>C&amp;omparar</translation>
    </message>
    <message>
        <source>Ba&amp;tch element</source>
        <translation>Elemen&amp;to do lote</translation>
    </message>
    <message>
        <source>Exercise 1: additive vs scaled dot</source>
        <translation>Exercício 1: aditiva vs. produto escalar escalonado</translation>
    </message>
    <message>
        <source>Compare additive with scaled dot-product attention on the current inputs</source>
        <translation>Compara a atenção aditiva com a atenção de produto escalar escalonado nas entradas atuais</translation>
    </message>
    <message>
        <source>Randomise keys</source>
        <translation>Chaves aleatórias</translation>
    </message>
    <message>
        <source>Fill the keys with random numbers (one undoable edit in the main window)</source>
        <translation>Preenche as chaves com números aleatórios (uma edição que pode ser desfeita na janela principal)</translation>
    </message>
    <message>
        <source>Load the dot-product toy</source>
        <translation>Carregar o exemplo de brinquedo de produto escalar</translation>
    </message>
    <message>
        <source>Scaled dot product needs queries and keys of the same length: the book&apos;s dot-product toy has both of length 2</source>
        <translation>O produto escalar escalonado precisa de consultas e chaves do mesmo comprimento: o exemplo de brinquedo de produto escalar do livro tem ambas de comprimento 2</translation>
    </message>
    <message>
        <source>max |A − B|: —</source>
        <translation>máx. |A − B|: —</translation>
    </message>
    <message>
        <source>The largest absolute difference between the two weight matrices (this batch element)</source>
        <translation>A maior diferença absoluta entre as duas matrizes de pesos (neste elemento do lote)</translation>
    </message>
    <message>
        <source>Which batch element to show (the same as in the main window)</source>
        <translation>Qual elemento do lote mostrar (o mesmo da janela principal)</translation>
    </message>
    <message>
        <source>&lt;b&gt;Exercise 1.&lt;/b&gt; Do additive and scaled dot-product attention still give the same weights once the keys change? </source>
        <translation>&lt;b&gt;Exercício 1.&lt;/b&gt; A atenção aditiva e a atenção de produto escalar escalonado ainda dão os mesmos pesos quando as chaves mudam? </translation>
    </message>
    <message>
        <source>&lt;br&gt;&lt;b&gt;Now the keys are all the same vector&lt;/b&gt;, so every key gets the same score under &lt;i&gt;any&lt;/i&gt; scoring function, and the softmax spreads the weight evenly over the valid keys: both give 1/(valid length), and A − B is 0. </source>
        <translation>&lt;br&gt;&lt;b&gt;Agora as chaves são todas o mesmo vetor&lt;/b&gt;, então toda chave recebe a mesma pontuação com &lt;i&gt;qualquer&lt;/i&gt; função de pontuação, e o softmax distribui o peso por igual entre as chaves válidas: ambas dão 1/(comprimento válido), e A − B é 0. </translation>
    </message>
    <message>
        <source>&lt;br&gt;&lt;b&gt;The keys differ, but no query of batch element {b} has more than one valid key&lt;/b&gt;: the softmax has nothing to rank, so both give the same weights whatever their scores, and A − B is 0. Pick another batch element or raise its valid length.</source>
        <translation>&lt;br&gt;&lt;b&gt;As chaves diferem, mas nenhuma consulta do elemento {b} do lote tem mais de uma chave válida&lt;/b&gt;: o softmax não tem o que ordenar, então os dois dão os mesmos pesos, sejam quais forem as pontuações, e A − B é 0. Escolha outro elemento do lote ou aumente o seu comprimento válido.</translation>
    </message>
    <message>
        <source>&lt;br&gt;&lt;b&gt;Now the keys differ.&lt;/b&gt; </source>
        <translation>&lt;br&gt;&lt;b&gt;Agora as chaves diferem.&lt;/b&gt; </translation>
    </message>
    <message>
        <source>&lt;br&gt;With different keys each scoring function ranks them by its own measure: scaled dot product by &lt;b&gt;q&lt;/b&gt;&lt;sup&gt;⊤&lt;/sup&gt;&lt;b&gt;k&lt;/b&gt;/√&lt;i&gt;d&lt;/i&gt;, additive through a small network whose weights &lt;b&gt;W&lt;/b&gt;&lt;sub&gt;&lt;i&gt;q&lt;/i&gt;&lt;/sub&gt;, &lt;b&gt;W&lt;/b&gt;&lt;sub&gt;&lt;i&gt;k&lt;/i&gt;&lt;/sub&gt;, &lt;b&gt;w&lt;/b&gt;&lt;sub&gt;&lt;i&gt;v&lt;/i&gt;&lt;/sub&gt; are random and untrained here. Nothing ties the two together, so the weights differ. Edit a key in the Keys table, or click &lt;i&gt;Randomise keys&lt;/i&gt;, and watch A − B.</source>
        <translation>&lt;br&gt;Com chaves diferentes, cada função de pontuação as ordena pela sua própria medida: o produto escalar escalonado por &lt;b&gt;q&lt;/b&gt;&lt;sup&gt;⊤&lt;/sup&gt;&lt;b&gt;k&lt;/b&gt;/√&lt;i&gt;d&lt;/i&gt;, a aditiva por meio de uma pequena rede cujos pesos &lt;b&gt;W&lt;/b&gt;&lt;sub&gt;&lt;i&gt;q&lt;/i&gt;&lt;/sub&gt;, &lt;b&gt;W&lt;/b&gt;&lt;sub&gt;&lt;i&gt;k&lt;/i&gt;&lt;/sub&gt;, &lt;b&gt;w&lt;/b&gt;&lt;sub&gt;&lt;i&gt;v&lt;/i&gt;&lt;/sub&gt; aqui são aleatórios e não treinados. Nada liga uma à outra, então os pesos diferem. Edite uma chave na tabela Chaves, ou clique em &lt;i&gt;Chaves aleatórias&lt;/i&gt;, e observe A − B.</translation>
    </message>
    <message>
        <source>Scaled dot product needs queries and keys of the same length (here {d_q} and {d_k}): load the dot-product toy, whose queries and keys both have length 2.</source>
        <translation>O produto escalar escalonado precisa de consultas e chaves do mesmo comprimento (aqui {d_q} e {d_k}): carregue o exemplo de brinquedo de produto escalar, cujas consultas e chaves têm ambas comprimento 2.</translation>
    </message>
    <message>
        <source>computing…</source>
        <translation>calculando…</translation>
    </message>
    <message>
        <source>up to date</source>
        <translation>atualizado</translation>
    </message>
    <message>
        <source>max |A − B|: — (both sides must compute)</source>
        <translation>máx. |A − B|: — (os dois lados precisam ser calculados)</translation>
    </message>
    <message>
        <source>A − B needs both results</source>
        <translation>A − B precisa dos dois resultados</translation>
    </message>
    <message>
        <source>the weights have different shapes {a} and {b}</source>
        <translation>os pesos têm formatos diferentes, {a} e {b}</translation>
    </message>
    <message>
        <source>query {r}, key {c}</source>
        <translation>consulta {r}, chave {c}</translation>
    </message>
    <message>
        <source>max |A − B|: no finite difference</source>
        <translation>máx. |A − B|: nenhuma diferença finita</translation>
    </message>
    <message>
        <source>(identical weights)</source>
        <translation>(pesos idênticos)</translation>
    </message>
    <message>
        <source>{n} cell NaN on one side (magenta)</source>
        <translation>{n} célula NaN em um dos lados (magenta)</translation>
    </message>
    <message>
        <source>{n} cells NaN on one side (magenta)</source>
        <translation>{n} células NaN em um dos lados (magenta)</translation>
    </message>
</context>
<context>
    <name>CopyCode</name>
    <message>
        <source>Save the data file the script loads</source>
        <extracomment>Where the framework chosen is remembered, and the one chosen until then. ``ask(parent, suggested_path) -&gt; chosen path, or None when the user cancels``.</extracomment>
        <translation>Salvar o arquivo de dados que o script carrega</translation>
    </message>
    <message>
        <source>NumPy archive (*.npz)</source>
        <translation>Arquivo NumPy (*.npz)</translation>
    </message>
    <message>
        <source>Copy as &amp;code</source>
        <translation>Copiar como &amp;código</translation>
    </message>
    <message>
        <source>Code</source>
        <extracomment>The framework scripts are written in. The last script copied and the data file written with it (None: none needed).</extracomment>
        <translation>Código</translation>
    </message>
    <message>
        <source>attnviz (a call of attnviz.engine.attend)</source>
        <translation>attnviz (uma chamada de attnviz.engine.attend)</translation>
    </message>
    <message>
        <source>Copy a {framework} script that rebuilds these inputs and computes the same attention (Ctrl+Shift+C); the arrow chooses the framework</source>
        <translation>Copia um script {framework} que reconstrói estas entradas e calcula a mesma atenção (Ctrl+Shift+C); a seta escolhe o framework</translation>
    </message>
    <message>
        <source>Code &amp;framework</source>
        <translation>&amp;Framework do código</translation>
    </message>
    <message>
        <source>The framework Copy as code writes in</source>
        <translation>O framework em que Copiar como código escreve</translation>
    </message>
    <message>
        <source>Copy the current inputs as a runnable script</source>
        <translation>Copia as entradas atuais como um script executável</translation>
    </message>
    <message>
        <source>Copy as code: these inputs are still being computed; try again when the status bar says up to date</source>
        <translation>Copiar como código: estas entradas ainda estão sendo calculadas; tente de novo quando a barra de status disser atualizado</translation>
    </message>
    <message>
        <source>Copy as code cancelled: these inputs are too big for the script itself, so it needs a data file</source>
        <translation>Cópia como código cancelada: estas entradas são grandes demais para o próprio script, que precisa de um arquivo de dados</translation>
    </message>
    <message>
        <source>Could not write the data file {path}: {error}</source>
        <translation>Não foi possível gravar o arquivo de dados {path}: {error}</translation>
    </message>
    <message>
        <source>Copied a {lines}-line {framework} script that reproduces these weights; it loads its larger arrays from {path}</source>
        <translation>Copiado um script {framework} de {lines} linhas que reproduz estes pesos; ele carrega os arrays maiores de {path}</translation>
    </message>
    <message>
        <source>Copied a {lines}-line {framework} script that reproduces these weights</source>
        <translation>Copiado um script {framework} de {lines} linhas que reproduz estes pesos</translation>
    </message>
    <message>
        <source>its first lines say what it leaves out</source>
        <translation>suas primeiras linhas dizem o que ele deixa de fora</translation>
    </message>
    <message>
        <source>Could not write the script: {error}</source>
        <translation>Não foi possível escrever o script: {error}</translation>
    </message>
</context>
<context>
    <name>Diagnostics</name>
    <message>
        <source>{n} query row</source>
        <translation>{n} linha de consulta</translation>
    </message>
    <message>
        <source>{n} query rows</source>
        <translation>{n} linhas de consulta</translation>
    </message>
    <message>
        <source>{rows} with no valid key: in {dtype} the -1e6 fill overflows to -inf, so these rows are NaN</source>
        <translation>{rows} sem chave válida: em {dtype} o preenchimento -1e6 estoura para -inf, então essas linhas viram NaN</translation>
    </message>
    <message>
        <source>{rows} with no valid key: the book&apos;s -1e6 fill gives them uniform weights over all keys, padding included</source>
        <translation>{rows} sem chave válida: o preenchimento -1e6 do livro lhes dá pesos uniformes sobre todas as chaves, padding incluído</translation>
    </message>
    <message>
        <source>{rows} with no valid key: zero weights and zero output</source>
        <translation>{rows} sem chave válida: pesos zero e saída zero</translation>
    </message>
    <message>
        <source>{rows} with no valid key: the softmax of an all -inf row is NaN</source>
        <translation>{rows} sem chave válida: o softmax de uma linha toda -inf é NaN</translation>
    </message>
    <message>
        <source>{n} row of weights contain NaN</source>
        <translation>{n} linha de pesos contém NaN</translation>
    </message>
    <message>
        <source>{n} rows of weights contain NaN</source>
        <translation>{n} linhas de pesos contêm NaN</translation>
    </message>
    <message>
        <source>{n} score overflowed to Inf in {dtype}</source>
        <translation>{n} pontuação estourou para Inf em {dtype}</translation>
    </message>
    <message>
        <source>{n} scores overflowed to Inf in {dtype}</source>
        <translation>{n} pontuações estouraram para Inf em {dtype}</translation>
    </message>
    <message>
        <source>{n} score are NaN</source>
        <translation>{n} pontuação é NaN</translation>
    </message>
    <message>
        <source>{n} scores are NaN</source>
        <translation>{n} pontuações são NaN</translation>
    </message>
    <message>
        <source>{n} valid length exceeds the {keys} keys: treated as all keys valid, as the book&apos;s code does</source>
        <translation>{n} comprimento válido excede as {keys} chaves: todas as chaves tratadas como válidas, como faz o código do livro</translation>
    </message>
    <message>
        <source>{n} valid lengths exceed the {keys} keys: treated as all keys valid, as the book&apos;s code does</source>
        <translation>{n} comprimentos válidos excedem as {keys} chaves: tratados como todas as chaves válidas, como faz o código do livro</translation>
    </message>
    <message>
        <source>some real scores are at or below the -1e6 fill: masked keys are not negligible against them</source>
        <translation>algumas pontuações reais estão no preenchimento -1e6 ou abaixo dele: diante delas, as chaves mascaradas não são desprezíveis</translation>
    </message>
    <message>
        <source>{n} query row has every key masked by a finite additive fill: the softmax spreads it over the masked keys</source>
        <translation>{n} linha de consulta tem todas as chaves mascaradas por um preenchimento aditivo finito: a softmax a distribui pelas chaves mascaradas</translation>
    </message>
    <message>
        <source>{n} query rows have every key masked by a finite additive fill: the softmax spreads them over the masked keys</source>
        <translation>{n} linhas de consulta têm todas as chaves mascaradas por um preenchimento aditivo finito: a softmax as distribui pelas chaves mascaradas</translation>
    </message>
    <message>
        <source>the 1/0 mask was added to the scores as a float mask: nothing is masked</source>
        <translation>a máscara 1/0 foi somada às pontuações como máscara float: nada é mascarado</translation>
    </message>
    <message>
        <source>the mask was read with the opposite polarity: masked keys are attended</source>
        <translation>a máscara foi lida com a polaridade oposta: as chaves mascaradas recebem atenção</translation>
    </message>
    <message>
        <source>{n} score overflowed to Inf or NaN in {dtype} although every input is finite (the largest is {largest}, the scores multiplied by {factor}): the weights of its row are NaN or meaningless; make the inputs or the scale smaller</source>
        <translation>{n} pontuação estourou para Inf ou NaN em {dtype} embora todas as entradas sejam finitas (a maior é {largest}, as pontuações multiplicadas por {factor}): os pesos da sua linha são NaN ou sem sentido; diminua as entradas ou a escala</translation>
    </message>
    <message>
        <source>{n} scores overflowed to Inf or NaN in {dtype} although every input is finite (the largest is {largest}, the scores multiplied by {factor}): the weights of their rows are NaN or meaningless; make the inputs or the scale smaller</source>
        <translation>{n} pontuações estouraram para Inf ou NaN em {dtype} embora todas as entradas sejam finitas (a maior é {largest}, as pontuações multiplicadas por {factor}): os pesos das suas linhas são NaN ou sem sentido; diminua as entradas ou a escala</translation>
    </message>
    <message>
        <source>attn_mask reads True as attend</source>
        <extracomment>How each mask argument reads its values, for the polarity sentences (the doctor&apos;s too).</extracomment>
        <translation>attn_mask lê True como atender</translation>
    </message>
    <message>
        <source>key_padding_mask reads True as ignore</source>
        <translation>key_padding_mask lê True como ignorar</translation>
    </message>
    <message>
        <source>attention_mask reads 1 as attend</source>
        <translation>attention_mask lê 1 como atender</translation>
    </message>
    <message>
        <source>ignore</source>
        <translation>ignorar</translation>
    </message>
    <message>
        <source>attend</source>
        <translation>atender</translation>
    </message>
    <message>
        <source>{name} is a float mask of 0s and 1s, which is added to the scores: it masks nothing. A keep/drop mask must be boolean (True = {meaning}) or go through attention_mask=</source>
        <translation>{name} é uma máscara de ponto flutuante de 0s e 1s, que é somada às pontuações: não mascara nada. Uma máscara de manter/descartar deve ser booleana (True = {meaning}) ou passar por attention_mask=</translation>
    </message>
    <message>
        <source>{n} finite value of {name} is beyond {dtype}&apos;s range and became -inf: build the mask with torch.finfo(torch.{dtype}).min</source>
        <translation>{n} valor finito de {name} está fora do alcance de {dtype} e virou -inf: construa a máscara com torch.finfo(torch.{dtype}).min</translation>
    </message>
    <message>
        <source>{n} finite values of {name} are beyond {dtype}&apos;s range and became -inf: build the mask with torch.finfo(torch.{dtype}).min</source>
        <translation>{n} valores finitos de {name} estão fora do alcance de {dtype} e viraram -inf: construa a máscara com torch.finfo(torch.{dtype}).min</translation>
    </message>
    <message>
        <source>{names} are added together, and where both hold their most negative values the sum overflows to -inf in {dtype}</source>
        <translation>{names} são somadas, e onde as duas têm seus valores mais negativos a soma estoura para -inf em {dtype}</translation>
    </message>
    <message>
        <source>{name} hides every key of batch element(s) {elements}; padding never covers a whole sequence, so its polarity is probably inverted ({convention})</source>
        <translation>{name} esconde todas as chaves do(s) elemento(s) do lote {elements}; o preenchimento nunca cobre uma sequência inteira, então sua polaridade provavelmente está invertida ({convention})</translation>
    </message>
    <message>
        <source>{a} and {b} keep opposite keys of batch element(s) {elements}: one of them has the wrong polarity</source>
        <translation>{a} e {b} mantêm chaves opostas do(s) elemento(s) do lote {elements}: uma delas tem a polaridade errada</translation>
    </message>
</context>
<context>
    <name>Doctor</name>
    <message>
        <source>call {index} ({name})</source>
        <extracomment>Tokens read as padding where they run from either end of a sequence. GPT-2 pads with &quot;&lt;|endoftext|&gt;&quot;, which is also its first token: name it when a batch is padded with it. What each ``Finding.kind`` means. Kinds of ``read_padding`` that name the mistake&apos;s shape (causes; the others are symptoms). Makes a Finding of the call being diagnosed: finding(kind, severity, text, heads=, batch=, rows=, count=).</extracomment>
        <translation>chamada {index} ({name})</translation>
    </message>
    <message>
        <source>heads {list}</source>
        <translation>cabeças {list}</translation>
    </message>
    <message>
        <source>batch {list}</source>
        <translation>lote {list}</translation>
    </message>
    <message>
        <source>rows {list}</source>
        <translation>linhas {list}</translation>
    </message>
    <message>
        <source>error</source>
        <translation>erro</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>aviso</translation>
    </message>
    <message>
        <source>{severity}: {where}: {message}</source>
        <translation>{severity}: {where}: {message}</translation>
    </message>
    <message>
        <source>lengths must be at most the calls&apos; keys; one is out of any range</source>
        <translation>os comprimentos devem ser no máximo as chaves das chamadas; um deles está fora de qualquer intervalo</translation>
    </message>
    <message>
        <source>lengths must have one entry per batch element ({batch}); got shape {shape}</source>
        <translation>lengths deve ter uma entrada por elemento do lote ({batch}); veio o formato {shape}</translation>
    </message>
    <message>
        <source>lengths must be from 0 to the keys of call {index} ({keys}); got {value}</source>
        <translation>os comprimentos devem ir de 0 às chaves da chamada {index} ({keys}); recebido {value}</translation>
    </message>
    <message>
        <source>the engine cannot read this call&apos;s masks: {problem}</source>
        <extracomment>Recorded weights that are not probability distributions (no mask is read from them). Elements of the calls&apos; ``allowed`` masks kept from the first pass over the run to the second (64 MiB of booleans): 6 layers x 12 heads x batch 8 x 128 tokens take 9 Mi.</extracomment>
        <translation>o motor não consegue ler as máscaras desta chamada: {problem}</translation>
    </message>
    <message>
        <source>{n} query row attends to later positions while {causal} of the {total} calls of this stack are causal: this call misses its causal mask (pass is_causal=True, or build the causal mask into attn_mask)</source>
        <translation>{n} linha de consulta presta atenção a posições posteriores, enquanto {causal} das {total} chamadas desta pilha são causais: falta a esta chamada a sua máscara causal (passe is_causal=True ou inclua a máscara causal na attn_mask)</translation>
    </message>
    <message>
        <source>{n} query rows attend to later positions while {causal} of the {total} calls of this stack are causal: this call misses its causal mask (pass is_causal=True, or build the causal mask into attn_mask)</source>
        <translation>{n} linhas de consulta prestam atenção a posições posteriores, enquanto {causal} das {total} chamadas desta pilha são causais: falta a esta chamada a sua máscara causal (passe is_causal=True ou inclua a máscara causal na attn_mask)</translation>
    </message>
    <message>
        <source>{n} padding query row attends to padding keys ({pads}), which a key padding mask never allows: the mask pairs padding with padding instead of hiding padding keys; use a (B, 1, 1, L_k) key mask</source>
        <translation>{n} linha de consulta de padding presta atenção a chaves de padding ({pads}), o que uma máscara de padding de chaves nunca permite: a máscara emparelha padding com padding em vez de esconder as chaves de padding; use uma máscara de chaves (B, 1, 1, L_k)</translation>
    </message>
    <message>
        <source>{n} padding query rows attend to padding keys ({pads}), which a key padding mask never allows: the mask pairs padding with padding instead of hiding padding keys; use a (B, 1, 1, L_k) key mask</source>
        <translation>{n} linhas de consulta de padding prestam atenção a chaves de padding ({pads}), o que uma máscara de padding de chaves nunca permite: a máscara emparelha padding com padding em vez de esconder as chaves de padding; use uma máscara de chaves (B, 1, 1, L_k)</translation>
    </message>
    <message>
        <source>{name} holds -inf next to {count} values near {dtype}&apos;s lowest ({lowest:.4g}): two finfo.min fills were added and overflowed; combine masks as booleans, or clamp their sum at torch.finfo(torch.{dtype}).min</source>
        <translation>{name} contém -inf ao lado de {count} valores perto do menor valor de {dtype} ({lowest:.4g}): dois preenchimentos finfo.min foram somados e estouraram; combine as máscaras como booleanas, ou limite a soma delas a torch.finfo(torch.{dtype}).min</translation>
    </message>
    <message>
        <source>{name} of shape {shape} varies along the queries but is constant along the keys: it hides whole query rows ({rows} of them; the model produced {outcome} there) while every other query attends to every key, padding included; a padding mask broadcasts over the queries: shape (B, 1, 1, L_k), not (B, 1, L_q, 1)</source>
        <translation>{name} de formato {shape} varia ao longo das consultas, mas é constante ao longo das chaves: esconde linhas de consulta inteiras ({rows} delas; o modelo produziu {outcome} ali), enquanto todas as outras consultas prestam atenção a todas as chaves, padding incluído; uma máscara de padding se propaga (broadcast) sobre as consultas: formato (B, 1, 1, L_k), não (B, 1, L_q, 1)</translation>
    </message>
    <message>
        <source>the mask lets batch element(s) {elements} attend to exactly their padding keys ({pads}) and hides their real ones: its polarity is inverted ({convention})</source>
        <translation>a máscara deixa o(s) elemento(s) do lote {elements} prestar atenção exatamente às suas chaves de padding ({pads}) e esconde as reais: sua polaridade está invertida ({convention})</translation>
    </message>
    <message>
        <source>on every real query row of batch element(s) {elements} the mask allows exactly what a padding (and causal) mask would hide and hides what it would allow: its polarity is inverted, built as True = masked where {convention}; invert it (~mask), or build it with True = attend</source>
        <translation>em toda linha de consulta real do(s) elemento(s) do lote {elements} a máscara permite exatamente o que uma máscara de preenchimento (e causal) esconderia e esconde o que ela permitiria: sua polaridade está invertida, construída como True = mascarado onde {convention}; inverta-a (~mask) ou construa-a com True = atender</translation>
    </message>
    <message>
        <source>batch element(s) {elements} are left padded, but the mask hides their last keys, which are real tokens ({hidden} real keys hidden), and lets their padding keys at the start through: left padding was masked as right padding; build the mask from the attention mask (1 = real token), not from the lengths</source>
        <translation>o(s) elemento(s) do lote {elements} têm preenchimento à esquerda, mas a máscara esconde suas últimas chaves, que são tokens reais ({hidden} chaves reais escondidas), e deixa passar suas chaves de preenchimento no início: o preenchimento à esquerda foi mascarado como preenchimento à direita; construa a máscara a partir da attention mask (1 = token real), não dos comprimentos</translation>
    </message>
    <message>
        <source>batch element(s) {elements} are right padded, but the mask hides their first keys, which are real tokens ({hidden} real keys hidden), and lets their padding keys at the end through: right padding was masked as left padding; build the mask from the attention mask (1 = real token)</source>
        <translation>o(s) elemento(s) do lote {elements} têm preenchimento à direita, mas a máscara esconde suas primeiras chaves, que são tokens reais ({hidden} chaves reais escondidas), e deixa passar suas chaves de preenchimento no fim: o preenchimento à direita foi mascarado como preenchimento à esquerda; construa a máscara a partir da attention mask (1 = token real)</translation>
    </message>
    <message>
        <source>is_causal=True aligns the causal mask top-left: with {n_q} queries and {n_k} keys (a KV-cache step) query i sees keys 0 to i only, not the {past} cached keys before it; align it bottom-right with the boolean attn_mask torch.ones(L_q, L_k, dtype=torch.bool).tril(L_k - L_q), or pass no causal mask for a single new token</source>
        <translation>is_causal=True alinha a máscara causal no canto superior esquerdo: com {n_q} consultas e {n_k} chaves (um passo com cache KV), a consulta i vê só as chaves de 0 a i, não as {past} chaves em cache antes dela; alinhe-a no canto inferior direito com a attn_mask booleana torch.ones(L_q, L_k, dtype=torch.bool).tril(L_k - L_q), ou não passe máscara causal para um único token novo</translation>
    </message>
    <message>
        <source>the causal mask is aligned top-left: with {n_q} queries and {n_k} keys (a KV-cache step) query i sees keys 0 to i only, not the {past} cached keys before it; build it bottom-right, torch.ones(L_q, L_k, dtype=torch.bool).tril(L_k - L_q)</source>
        <translation>a máscara causal está alinhada no canto superior esquerdo: com {n_q} consultas e {n_k} chaves (um passo com cache KV), a consulta i vê só as chaves de 0 a i, não as {past} chaves em cache antes dela; construa-a alinhada no canto inferior direito, torch.ones(L_q, L_k, dtype=torch.bool).tril(L_k - L_q)</translation>
    </message>
    <message>
        <source>NaN</source>
        <translation>NaN</translation>
    </message>
    <message>
        <source>zeros</source>
        <translation>zeros</translation>
    </message>
    <message>
        <source>the plain average of every value</source>
        <translation>a média simples de todos os valores</translation>
    </message>
    <message>
        <source>neither NaN, zeros nor an average</source>
        <translation>nem NaN, nem zeros, nem uma média</translation>
    </message>
    <message>
        <source>an output that was not recorded</source>
        <translation>uma saída que não foi registrada</translation>
    </message>
    <message>
        <source>{n} query row has no key left to attend to, and the model produced NaN there, which later layers spread (0 x NaN is NaN): leave every query at least one key (hide padding keys, (B, 1, 1, L_k), not whole rows), or use SDPA&apos;s boolean mask, which gives such rows zeros</source>
        <translation>{n} linha de consulta não tem mais nenhuma chave a que prestar atenção, e o modelo produziu NaN ali, que as camadas seguintes espalham (0 x NaN é NaN): deixe a toda consulta ao menos uma chave (esconda as chaves de padding, (B, 1, 1, L_k), não linhas inteiras), ou use a máscara booleana do SDPA, que dá zeros a essas linhas</translation>
    </message>
    <message>
        <source>{n} query rows have no key left to attend to, and the model produced NaN there, which later layers spread (0 x NaN is NaN): leave every query at least one key (hide padding keys, (B, 1, 1, L_k), not whole rows), or use SDPA&apos;s boolean mask, which gives such rows zeros</source>
        <translation>{n} linhas de consulta não têm mais nenhuma chave a que prestar atenção, e o modelo produziu NaN ali, que as camadas seguintes espalham (0 x NaN é NaN): deixe a toda consulta ao menos uma chave (esconda as chaves de padding, (B, 1, 1, L_k), não linhas inteiras), ou use a máscara booleana do SDPA, que dá zeros a essas linhas</translation>
    </message>
    <message>
        <source>{n} query row has no key left to attend to and came out as zeros (SDPA&apos;s rule for a fully masked row): unless it is padding whose output is discarded, the mask hides too much</source>
        <translation>{n} linha de consulta não tem mais nenhuma chave a que prestar atenção e saiu como zeros (a regra do SDPA para uma linha toda mascarada): a menos que seja padding cuja saída é descartada, a máscara esconde demais</translation>
    </message>
    <message>
        <source>{n} query rows have no key left to attend to and came out as zeros (SDPA&apos;s rule for a fully masked row): unless they are padding whose output is discarded, the mask hides too much</source>
        <translation>{n} linhas de consulta não têm mais nenhuma chave a que prestar atenção e saíram como zeros (a regra do SDPA para uma linha toda mascarada): a menos que sejam padding cuja saída é descartada, a máscara esconde demais</translation>
    </message>
    <message>
        <source>{n} query row has no key left to attend to, so a finite fill (finfo.min) spread it evenly over every key, padding included: unless it is padding whose output is discarded, the mask hides too much</source>
        <translation>{n} linha de consulta não tem mais nenhuma chave a que prestar atenção, então um preenchimento finito (finfo.min) a espalhou por igual sobre todas as chaves, padding incluído: a menos que seja padding cuja saída é descartada, a máscara esconde demais</translation>
    </message>
    <message>
        <source>{n} query rows have no key left to attend to, so a finite fill (finfo.min) spread them evenly over every key, padding included: unless they are padding whose output is discarded, the mask hides too much</source>
        <translation>{n} linhas de consulta não têm mais nenhuma chave a que prestar atenção, então um preenchimento finito (finfo.min) as espalhou por igual sobre todas as chaves, padding incluído: a menos que sejam padding cuja saída é descartada, a máscara esconde demais</translation>
    </message>
    <message>
        <source>{n} query row has no key left to attend to (the model produced {outcome} there): the mask hides every key of a query</source>
        <translation>{n} linha de consulta não tem mais nenhuma chave a que prestar atenção (o modelo produziu {outcome} ali): a máscara esconde todas as chaves de uma consulta</translation>
    </message>
    <message>
        <source>{n} query rows have no key left to attend to (the model produced {outcome} there): the mask hides every key of these queries</source>
        <translation>{n} linhas de consulta não têm mais nenhuma chave a que prestar atenção (o modelo produziu {outcome} ali): a máscara esconde todas as chaves dessas consultas</translation>
    </message>
    <message>
        <source>--max-fidelity {value}: expected a number &gt;= 0, e.g. 1e-5</source>
        <extracomment>The command lines that end ``--help``.</extracomment>
        <translation>--max-fidelity {value}: esperado um número &gt;= 0, p. ex. 1e-5</translation>
    </message>
    <message>
        <source>note: {note}</source>
        <translation>nota: {note}</translation>
    </message>
    <message>
        <source>{n} call</source>
        <translation>{n} chamada</translation>
    </message>
    <message>
        <source>{n} calls</source>
        <translation>{n} chamadas</translation>
    </message>
    <message>
        <source>{errors}, {warnings} in {calls}</source>
        <translation>{errors}, {warnings} em {calls}</translation>
    </message>
    <message>
        <source>{n} error</source>
        <extracomment>Run ``attnviz doctor`` with ``argv`` (without the word &quot;doctor&quot;); returns the exit status. The console script ``attnviz-doctor`` (its arguments are the process&apos;s).</extracomment>
        <translation>{n} erro</translation>
    </message>
    <message>
        <source>{n} errors</source>
        <translation>{n} erros</translation>
    </message>
    <message>
        <source>{n} warning</source>
        <translation>{n} aviso</translation>
    </message>
    <message>
        <source>{n} warnings</source>
        <translation>{n} avisos</translation>
    </message>
    <message>
        <source>no mask problem found in {calls}</source>
        <translation>nenhum problema de máscara encontrado em {calls}</translation>
    </message>
    <message>
        <source>{summary}; fidelity at most {fidelity:.2g}</source>
        <translation>{summary}; fidelidade no máximo {fidelity:.2g}</translation>
    </message>
    <message>
        <source>path not recorded</source>
        <translation>caminho não registrado</translation>
    </message>
    <message>
        <source>weights only, as recorded</source>
        <translation>apenas pesos, como registrados</translation>
    </message>
    <message>
        <source>fidelity not measured</source>
        <translation>fidelidade não medida</translation>
    </message>
    <message>
        <source>fidelity {value:.2g}</source>
        <translation>fidelidade {value:.2g}</translation>
    </message>
    <message>
        <source>call {index} ({name}): {path}, {fidelity}</source>
        <translation>chamada {index} ({name}): {path}, {fidelity}</translation>
    </message>
    <message>
        <source>--lengths {text}: expected whole numbers &gt;= 0 separated by commas, e.g. 7,5,3</source>
        <translation>--lengths {text}: esperavam-se números inteiros &gt;= 0 separados por vírgulas, p. ex. 7,5,3</translation>
    </message>
    <message>
        <source>severity</source>
        <translation>gravidade</translation>
    </message>
    <message>
        <source>where</source>
        <translation>onde</translation>
    </message>
    <message>
        <source>what is wrong</source>
        <translation>o que está errado</translation>
    </message>
    <message>
        <source>Click a finding to see its cells</source>
        <translation>Clique em um problema para ver suas células</translation>
    </message>
    <message>
        <source>Examining every call&apos;s masks…</source>
        <translation>Examinando as máscaras de todas as chamadas…</translation>
    </message>
    <message>
        <source>Note: {text}</source>
        <translation>Nota: {text}</translation>
    </message>
    <message>
        <source>No mask here to examine: capture a model (attnviz.capture) or open a file of a model&apos;s tensors, and the doctor examines every mask it received.</source>
        <translation>Nenhuma máscara aqui para examinar: capture um modelo (attnviz.capture) ou abra um arquivo com os tensores de um modelo, e o médico examina todas as máscaras que ele recebeu.</translation>
    </message>
    <message>
        <source>No problem found in the masks of the one call.</source>
        <translation>Nenhum problema encontrado nas máscaras da única chamada.</translation>
    </message>
    <message>
        <source>No problem found in the masks of {n} calls.</source>
        <translation>Nenhum problema encontrado nas máscaras de {n} chamadas.</translation>
    </message>
    <message>
        <source>Some things could not be checked: see below.</source>
        <translation>Algumas coisas não puderam ser verificadas: veja abaixo.</translation>
    </message>
    <message>
        <source>Errors: {errors}, warnings: {warnings}, calls examined: {n}. Click one to see its cells.</source>
        <translation>Erros: {errors}, avisos: {warnings}, chamadas examinadas: {n}. Clique em um para ver suas células.</translation>
    </message>
    <message>
        <source>negative weights</source>
        <extracomment>Elements of scores computed at once by the overflow check (16 MiB of float32).</extracomment>
        <translation>pesos negativos</translation>
    </message>
    <message>
        <source>weights above 1</source>
        <translation>pesos acima de 1</translation>
    </message>
    <message>
        <source>NaN or Inf among numbers</source>
        <translation>NaN ou Inf entre números</translation>
    </message>
    <message>
        <source>rows summing to {low} to {high}</source>
        <translation>linhas com somas de {low} a {high}</translation>
    </message>
    <message>
        <source>{n} query row of the recorded weights is not a probability distribution ({what}): these are not softmax weights (scores, logits, or weights after dropout?), so no mask can be read from them</source>
        <translation>{n} linha de consulta dos pesos gravados não é uma distribuição de probabilidade ({what}): não são pesos de um softmax (pontuações, logits ou pesos após dropout?), então nenhuma máscara pode ser lida deles</translation>
    </message>
    <message>
        <source>{n} query rows of the recorded weights are not probability distributions ({what}): these are not softmax weights (scores, logits, or weights after dropout?), so no mask can be read from them</source>
        <translation>{n} linhas de consulta dos pesos gravados não são distribuições de probabilidade ({what}): não são pesos de um softmax (pontuações, logits ou pesos após dropout?), então nenhuma máscara pode ser lida deles</translation>
    </message>
    <message>
        <source>{n} score overflows to Inf or NaN in {dtype} although the queries and keys are finite (up to {q} and {k}, scale {scale}): the weights of its row are NaN or meaningless; make the inputs or the scale smaller</source>
        <translation>{n} pontuação estoura para Inf ou NaN em {dtype} embora as consultas e as chaves sejam finitas (até {q} e {k}, escala {scale}): os pesos da sua linha são NaN ou sem sentido; diminua as entradas ou a escala</translation>
    </message>
    <message>
        <source>{n} scores overflow to Inf or NaN in {dtype} although the queries and keys are finite (up to {q} and {k}, scale {scale}): the weights of their rows are NaN or meaningless; make the inputs or the scale smaller</source>
        <translation>{n} pontuações estouram para Inf ou NaN em {dtype} embora as consultas e as chaves sejam finitas (até {q} e {k}, escala {scale}): os pesos das suas linhas são NaN ou sem sentido; diminua as entradas ou a escala</translation>
    </message>
    <message>
        <source>attention dropout (p = {p}) was active in this call: the model ran in training mode, so its attention is random and not what inference computes; call model.eval() before running it</source>
        <extracomment>The largest fidelity of a float32 (or float64) call that counts as reproduced: attnviz recomputes in float64, so a faithful float32 call differs by ~1e-6; masks or score terms the capture did not see differ by far more than 1e-3. Half precision rounds each weight and output to 8 (bfloat16) or 11 (float16) bits; a faithful call differs by a few of its steps: 16 of them. The capture&apos;s note on a call given dropout_p &gt; 0 (its &quot;dropout (p = {p})&quot; kept in translations). (kind, severity, sentence) of one finding about a call.</extracomment>
        <translation>o dropout de atenção (p = {p}) estava ativo nesta chamada: o modelo rodou em modo de treino, então sua atenção é aleatória e não é o que a inferência calcula; chame model.eval() antes de executá-lo</translation>
    </message>
    <message>
        <source>attnviz could not check this call against the model&apos;s own output ({reason}): what it shows is not verified</source>
        <translation>o attnviz não pôde conferir esta chamada com a saída do próprio modelo ({reason}): o que ele mostra não está verificado</translation>
    </message>
    <message>
        <source>no output was recorded to compare with</source>
        <translation>nenhuma saída foi registrada para comparar</translation>
    </message>
    <message>
        <source>attnviz&apos;s recomputation differs from the model&apos;s output by {fidelity:.3g}, more than the {limit:.3g} allowed: attnviz cannot reproduce this call as recorded, and the mask is not the cause: the model computes it otherwise, in {cause}</source>
        <translation>o recálculo do attnviz difere da saída do modelo em {fidelity:.3g}, mais que os {limit:.3g} permitidos: o attnviz não consegue reproduzir esta chamada como foi registrada, e a máscara não é a causa: o modelo a calcula de outro modo, em {cause}</translation>
    </message>
    <message>
        <source>attnviz&apos;s recomputation differs from the model&apos;s output by {fidelity:.3g}, more than the {limit:.3g} allowed: attnviz cannot reproduce this call, so what is shown may not be what ran (masks, score terms or a head grouping the capture did not see, another dtype or kernel); compare the paths or implementations it can run (attnviz check)</source>
        <translation>o recálculo do attnviz difere da saída do modelo em {fidelity:.3g}, mais que os {limit:.3g} permitidos: o attnviz não consegue reproduzir esta chamada, então o que é mostrado pode não ser o que rodou (máscaras, termos de escore ou um agrupamento de cabeças que a captura não viu, outro dtype ou kernel); compare os caminhos ou implementações que ele pode executar (attnviz check)</translation>
    </message>
    <message>
        <source>asking for the weights ran this call on the {path} path while the other calls of its stack ran {usual}: what you see may not be what runs without output_attentions (compare a capture without it: a causal mask or a kernel&apos;s handling of empty rows can differ between paths)</source>
        <translation>pedir os pesos executou esta chamada pelo caminho {path} enquanto as outras chamadas da sua pilha executaram {usual}: o que você vê pode não ser o que executa sem output_attentions (compare com uma captura sem ele: uma máscara causal ou o tratamento de linhas vazias por um kernel pode diferir entre caminhos)</translation>
    </message>
    <message>
        <source>its FlexAttention block table skips {share}% of blocks that its mask_mod allows; PyTorch&apos;s CPU flex_attention ignored the table and computed them, so they are shown with weight here, but a GPU skips them: what runs there differs (put that sparsity in the mask_mod to have it on both)</source>
        <translation>sua tabela de blocos do FlexAttention pula {share}% dos blocos que seu mask_mod permite; o flex_attention do PyTorch na CPU ignorou a tabela e os calculou, então eles aparecem com peso aqui, mas uma GPU os pula: o que roda lá é diferente (coloque essa esparsidade no mask_mod para tê-la nos dois)</translation>
    </message>
    <message>
        <source>the padding mask is shifted by {shift} position(s) against the padding the tokens show (the keys it lets through are the real keys moved {shift} place(s) {direction}): {both}; build it from the attention mask itself, position for position</source>
        <extracomment>The offsets a shifted mask is tried at (a mask more than a few places off is not &quot;shifted&quot;).</extracomment>
        <translation>a máscara de preenchimento está deslocada {shift} posição(ões) em relação ao preenchimento que os tokens mostram (as chaves que ela deixa passar são as chaves reais movidas {shift} lugar(es) {direction}): {both}; construa-a a partir da própria máscara de atenção, posição por posição</translation>
    </message>
    <message>
        <source>later</source>
        <translation>para depois</translation>
    </message>
    <message>
        <source>earlier</source>
        <translation>para antes</translation>
    </message>
    <message>
        <source>real query rows attend to padding keys the mask lets through while it hides others, and no real key is hidden ({both}); build the padding mask from the attention mask of these very tokens</source>
        <translation>linhas de consulta reais prestam atenção a chaves de padding que a máscara deixa passar enquanto esconde outras, e nenhuma chave real está escondida ({both}); construa a máscara de padding a partir da máscara de atenção destes mesmos tokens</translation>
    </message>
    <message>
        <source>real query rows attend to padding keys, and no real key is hidden: nothing masks the padding ({both}); hide padding keys from every query with a (B, 1, 1, L_k) mask</source>
        <translation>linhas de consulta reais atendem a chaves de preenchimento, e nenhuma chave real está escondida: nada mascara o preenchimento ({both}); esconda as chaves de preenchimento de todas as consultas com uma máscara (B, 1, 1, L_k)</translation>
    </message>
    <message>
        <source>the mask does not follow the padding the tokens show: {both}; build the padding mask from the attention mask of these very tokens</source>
        <translation>a máscara não segue o preenchimento que os tokens mostram: {both}; construa a máscara de preenchimento a partir da máscara de atenção destes mesmos tokens</translation>
    </message>
    <message>
        <source>batch {e} attends to padding key(s) {pads} and hides real key(s) {reals} from every real query</source>
        <translation>o lote {e} atende à(s) chave(s) de preenchimento {pads} e esconde a(s) chave(s) real(is) {reals} de todas as consultas reais</translation>
    </message>
    <message>
        <source>batch {e} attends to padding key(s) {pads}</source>
        <translation>o lote {e} atende à(s) chave(s) de preenchimento {pads}</translation>
    </message>
    <message>
        <source>batch {e} hides real key(s) {reals} from every real query</source>
        <translation>o lote {e} esconde a(s) chave(s) real(is) {reals} de todas as consultas reais</translation>
    </message>
    <message>
        <source>batch elements&apos; padding masks landed in other elements&apos; heads (each head of these elements sees exactly another batch element&apos;s real keys): a per-sequence mask expanded to (B*H, L_q, L_k) in the wrong order; nn.MultiheadAttention reads index b*num_heads + h, so expand with mask.repeat_interleave(num_heads, 0), not mask.repeat(num_heads, 1, 1); {both}</source>
        <translation>as máscaras de preenchimento dos elementos do lote foram parar nas cabeças de outros elementos (cada cabeça destes elementos vê exatamente as chaves reais de outro elemento do lote): uma máscara por sequência expandida para (B*H, L_q, L_k) na ordem errada; nn.MultiheadAttention lê o índice b*num_heads + h, então expanda com mask.repeat_interleave(num_heads, 0), não mask.repeat(num_heads, 1, 1); {both}</translation>
    </message>
    <message>
        <source>batch {e}: encoder key(s) {keys}</source>
        <extracomment>How many keys a sentence names before &quot;...&quot;.</extracomment>
        <translation>lote {e}: chave(s) do codificador {keys}</translation>
    </message>
    <message>
        <source>none</source>
        <translation>nenhuma</translation>
    </message>
    <message>
        <source>batch {e}: encoder padding key(s) {keys}</source>
        <translation>lote {e}: chave(s) de preenchimento do codificador {keys}</translation>
    </message>
    <message>
        <source>a decoder&apos;s mask on encoder keys: this cross-attention call&apos;s keys are the encoder&apos;s, but the keys it lets through follow the decoder&apos;s padding, not the encoder&apos;s</source>
        <translation>uma máscara do decodificador sobre chaves do codificador: as chaves desta chamada de atenção cruzada são as do codificador, mas as chaves que ela deixa passar seguem o preenchimento do decodificador, não o do codificador</translation>
    </message>
    <message>
        <source>cut to</source>
        <translation>cortado para</translation>
    </message>
    <message>
        <source>padded with zeros to</source>
        <translation>preenchido com zeros até</translation>
    </message>
    <message>
        <source>padded with ones to</source>
        <translation>preenchido com uns até</translation>
    </message>
    <message>
        <source>a decoder-length mask on encoder keys: this cross-attention call&apos;s {n_k} keys are the encoder&apos;s (real lengths {encoder}), but its mask is the decoder&apos;s padding ({n_q} positions, real lengths {decoder}) {how} {n_k} keys{also}</source>
        <translation>uma máscara do comprimento do decodificador sobre chaves do codificador: as {n_k} chaves desta chamada de atenção cruzada são as do codificador (comprimentos reais {encoder}), mas sua máscara é o preenchimento do decodificador ({n_q} posições, comprimentos reais {decoder}) {how} {n_k} chaves{also}</translation>
    </message>
    <message>
        <source> (or arange(L_enc) &lt; the decoder&apos;s lengths: the same keys here)</source>
        <translation> (ou arange(L_enc) &lt; os comprimentos do decodificador: as mesmas chaves aqui)</translation>
    </message>
    <message>
        <source>the decoder&apos;s padding on the encoder&apos;s keys: this cross-attention call&apos;s {n_k} keys are the encoder&apos;s (real lengths {encoder}), but the keys it lets through are the first decoder-length ones, arange(L_enc) &lt; the decoder&apos;s lengths ({decoder})</source>
        <translation>o preenchimento do decodificador sobre as chaves do codificador: as {n_k} chaves desta chamada de atenção cruzada são as do codificador (comprimentos reais {encoder}), mas as chaves que ela deixa passar são as primeiras até o comprimento do decodificador, arange(L_enc) &lt; os comprimentos do decodificador ({decoder})</translation>
    </message>
    <message>
        <source>{cause}; real encoder keys wrongly hidden: {hidden}; encoder padding keys attended: {pads}; pass the encoder&apos;s attention_mask to cross-attention</source>
        <translation>{cause}; chaves reais do codificador escondidas por engano: {hidden}; chaves de preenchimento do codificador atendidas: {pads}; passe a attention_mask do codificador à atenção cruzada</translation>
    </message>
    <message>
        <source>positions not verified in the cached step of call {index}: the rotation between its token at key {key} and that token&apos;s copy at key {old} is neither the {expected} position(s) the cache puts between them nor a restart at 0 (rotary frequencies scaled at the highest one, or a cache that dropped keys, such as a sliding window&apos;s, can do that); attnviz check --checks kv_cache compares the step with the full forward</source>
        <extracomment>The most counts of hidden keys a restart is tried at (integers fill the circle: past a few dozen, some count fits any rotation). What is compared at most (the first batch elements, the first rows or shared tokens of each): one piece of evidence is enough, and a long shared prompt or chunked prefill stays cheap. A call of cross-attention by its name (its keys are another sequence&apos;s: no positions to read). (L_q, L_k) of the cached steps read (right or wrong): their other layers share their positions. The first causal call of a batch was read (deeper ones of an encoder-decoder&apos;s decoder depend on the encoder too: two equal prefixes no longer get equal queries there). Cached steps whose recorded positions were read: (L_q, L_k, the positions&apos; bytes). (L_q, L_k) of cached steps whose restart was reported (their other layers: said once).</extracomment>
        <translation>posições não verificadas no passo com cache da chamada {index}: a rotação entre seu token na chave {key} e a cópia desse token na chave {old} não é nem a(s) {expected} posição(ões) que o cache põe entre eles nem um recomeço em 0 (frequências rotary escaladas na mais alta, ou um cache que descartou chaves, como o de uma janela deslizante, podem causar isso); attnviz check --checks kv_cache compara o passo com o forward completo</translation>
    </message>
    <message>
        <source>positions not checked in the left-padded batch of call {index}: a capture shows them only where two differently padded batch elements start with the same tokens (their queries must then agree), and it holds no such pair (or no tokens); attnviz check --checks padding runs each sequence alone against the batch</source>
        <translation>posições não verificadas no lote preenchido à esquerda da chamada {index}: uma captura só as mostra onde dois elementos do lote preenchidos de modo diferente começam com os mesmos tokens (suas consultas devem então coincidir), e ela não contém tal par (ou não contém tokens); attnviz check --checks padding executa cada sequência sozinha contra o lote</translation>
    </message>
    <message>
        <source>positions not checked in the cached step(s) of call(s) {calls}: a capture shows a step&apos;s positions where it records the model&apos;s rotary or position embedding (a module holding inv_freq or named like one, called with the positions), or in a rotary model where a new token repeats one in its cache (at the first layer the two have the same values, and the rotation between their keys is their distance); neither is here; attnviz check --checks kv_cache compares the step with the full forward</source>
        <translation>posições não verificadas no(s) passo(s) com cache da(s) chamada(s) {calls}: uma captura mostra as posições de um passo quando registra o embedding rotativo ou de posição do modelo (um módulo com inv_freq ou com nome de um, chamado com as posições), ou num modelo rotativo em que um token novo repete um do seu cache (na primeira camada os dois têm os mesmos valores, e a rotação entre suas chaves é a sua distância); nenhum dos dois acontece aqui; attnviz check --checks kv_cache compara o passo com o forward completo</translation>
    </message>
    <message>
        <source>positions, not the mask: this cached step&apos;s positions restart at {first} while {cached} key(s) are cached: the model&apos;s {module} embedding was called with positions {shown} for the step&apos;s query rows (batch element {e}), where the cache puts its first new token at position {cached} or later; every batch element&apos;s step restarts this way: {elements}; the mask was ruled out (the step sees its cached keys); offset the positions by the cache&apos;s length (past_key_values.get_seq_length(), cache_position)</source>
        <translation>as posições, não a máscara: as posições deste passo com cache recomeçam em {first} enquanto {cached} chave(s) estão em cache: o embedding {module} do modelo foi chamado com as posições {shown} para as linhas de consulta do passo (elemento {e} do lote), onde o cache põe seu primeiro token novo na posição {cached} ou depois; o passo de todo elemento do lote recomeça assim: {elements}; a máscara foi descartada como causa (o passo vê suas chaves em cache); desloque as posições pelo comprimento do cache (past_key_values.get_seq_length(), cache_position)</translation>
    </message>
    <message>
        <source>positions, not the mask: this cached step&apos;s positions restart at {first} while {cached} key(s) are cached: the model&apos;s {module} embedding was called with positions {shown} for the step&apos;s query rows (batch element {e}), where the cache puts its first new token at position {cached} or later; batch elements whose step restarts: {elements}; the mask was ruled out (the step sees its cached keys); offset the positions by the cache&apos;s length (past_key_values.get_seq_length(), cache_position)</source>
        <translation>as posições, não a máscara: as posições deste passo com cache recomeçam em {first} enquanto {cached} chave(s) estão em cache: o embedding {module} do modelo foi chamado com as posições {shown} para as linhas de consulta do passo (elemento {e} do lote), onde o cache põe seu primeiro token novo na posição {cached} ou depois; elementos do lote cujo passo recomeça: {elements}; a máscara foi descartada como causa (o passo vê suas chaves em cache); desloque as posições pelo comprimento do cache (past_key_values.get_seq_length(), cache_position)</translation>
    </message>
    <message>
        <source>in call {index} the position_ids count the pads of the left-padded batch (batch element {e}&apos;s first real token was given position {given} after {pads} pad(s)); {module} attention ignores a shift of a whole sequence, so its weights are those of each sequence&apos;s own positions; pass (attention_mask.cumsum(-1) - 1).clamp(min=0) all the same</source>
        <translation>na chamada {index} os position_ids contam o preenchimento do lote preenchido à esquerda (o primeiro token real do elemento {e} do lote recebeu a posição {given} depois de {pads} token(s) de preenchimento); a atenção com embedding {module} ignora o deslocamento de uma sequência inteira, então seus pesos são os das posições próprias de cada sequência; passe (attention_mask.cumsum(-1) - 1).clamp(min=0) mesmo assim</translation>
    </message>
    <message>
        <source>learned position</source>
        <extracomment>The words for the kind of code a call&apos;s positions were read from (``recorded_positions``).</extracomment>
        <translation>de posição aprendido</translation>
    </message>
    <message>
        <source>positions, not the mask: the position_ids count the pads of this left-padded batch: batch element {e}&apos;s first real token (row {row}, after {pads} pad(s)) was given position {given} where its sequence alone starts at {origin}, and the model adds {module} embeddings, so its real tokens get other queries and keys than alone; batch elements given such positions: {elements}; the mask follows the padding, so it was ruled out; pass position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)</source>
        <translation>as posições, não a máscara: os position_ids contam o preenchimento deste lote preenchido à esquerda: o primeiro token real do elemento {e} do lote (linha {row}, depois de {pads} token(s) de preenchimento) recebeu a posição {given}, onde sua sequência sozinha começa em {origin}, e o modelo soma à entrada o embedding {module}, então seus tokens reais recebem outras consultas e chaves que sozinhos; elementos do lote que receberam tais posições: {elements}; a máscara segue o preenchimento, então foi descartada como causa; passe position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)</translation>
    </message>
    <message>
        <source>sinusoidal position</source>
        <translation>de posição senoidal</translation>
    </message>
    <message>
        <source>ALiBi</source>
        <translation>ALiBi</translation>
    </message>
    <message>
        <source>rotary</source>
        <extracomment>Kinds of positions a shift of a whole sequence leaves the weights alone for (relative ones): a rotation&apos;s angle between a query and a key, ALiBi&apos;s distance.</extracomment>
        <translation>rotativo</translation>
    </message>
    <message>
        <source>in call {index} the position_ids count the pads of the left-padded batch (batch elements {e} and {f} start with the same tokens, {apart} position(s) apart, and their queries and keys are the same vectors rotated); rotary attention ignores a shift of a whole sequence, so its weights are those of each sequence&apos;s own positions; pass (attention_mask.cumsum(-1) - 1).clamp(min=0) all the same</source>
        <translation>na chamada {index} as position_ids contam os preenchimentos do lote preenchido à esquerda (os elementos {e} e {f} do lote começam com os mesmos tokens, a {apart} posição(ões) de distância, e suas consultas e chaves são os mesmos vetores rotacionados); a atenção rotary ignora um deslocamento da sequência inteira, então seus pesos são os das posições próprias de cada sequência; passe (attention_mask.cumsum(-1) - 1).clamp(min=0) mesmo assim</translation>
    </message>
    <message>
        <source>positions, not the mask: batch elements {e} and {f} start with the same tokens ({prefix}), so in this causal call their real token {i} must get the same queries, keys and values wherever the padding put it, yet its queries differ by up to {largest:.3g} (rows {x} and {y}); element {more} has {pads} more pad(s) before it than element {fewer}, and its position_ids count them (arange over a left-padded batch); the mask follows the padding here, so it was ruled out; pass position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)</source>
        <translation>as posições, não a máscara: os elementos {e} e {f} do lote começam com os mesmos tokens ({prefix}), então nesta chamada causal seu token real {i} deve receber as mesmas consultas, chaves e valores onde quer que o preenchimento o tenha posto, mas suas consultas diferem em até {largest:.3g} (linhas {x} e {y}); o elemento {more} tem {pads} preenchimento(s) a mais antes dele que o elemento {fewer}, e suas position_ids os contam (arange sobre um lote preenchido à esquerda); a máscara segue o preenchimento aqui, então foi descartada; passe position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)</translation>
    </message>
    <message>
        <source>positions, not the mask: this cached step&apos;s positions restart at 0: its new token at key {j} (query row {r}) repeats the token at key {old}, and at the first layer the rotation between their keys is {restart} position(s), where the {cached} cached token(s) before the step put them {expected} apart; the step was given positions counted from its own first token, not from the cache&apos;s length; offset them by the number of cached tokens (past_key_values.get_seq_length(), cache_position)</source>
        <translation>as posições, não a máscara: as posições deste passo com cache recomeçam em 0: seu token novo na chave {j} (linha de consulta {r}) repete o token da chave {old}, e na primeira camada a rotação entre suas chaves é de {restart} posição(ões), onde o(s) {cached} token(s) em cache antes do passo os põem a {expected} de distância; o passo recebeu posições contadas a partir do seu próprio primeiro token, não do comprimento do cache; desloque-as pelo número de tokens em cache (past_key_values.get_seq_length(), cache_position)</translation>
    </message>
    <message>
        <source>every query head reads KV head {kv}: the keys and values of one KV head were expanded to all the heads (multi-query attention&apos;s grouping) where the model has {count}</source>
        <translation>toda cabeça de consulta lê a cabeça KV {kv}: as chaves e os valores de uma só cabeça KV foram expandidos para todas as cabeças (o agrupamento da atenção multi-query) onde o modelo tem {count}</translation>
    </message>
    <message>
        <source>its KV heads were expanded with repeat where repeat_interleave is meant</source>
        <translation>suas cabeças KV foram expandidas com repeat onde se queria repeat_interleave</translation>
    </message>
    <message>
        <source>the head grouping: query heads 0-{last} read KV heads [{got}], not [{expected}] (h // {groups}) as SDPA and repeat_kv group them: {cause}</source>
        <translation>o agrupamento das cabeças: as cabeças de consulta 0-{last} leem as cabeças KV [{got}], não [{expected}] (h // {groups}) como o SDPA e o repeat_kv as agrupam: {cause}</translation>
    </message>
    <message>
        <source>{grouping}; grouped this way, the model&apos;s output is reproduced within {found:.2g}</source>
        <translation>{grouping}; agrupada assim, a saída do modelo é reproduzida com diferença de até {found:.2g}</translation>
    </message>
    <message>
        <source>the scale: the model&apos;s output is reproduced (within {found:.2g}) with its scores scaled by {label} ({used:.4g}), not the {expected:.4g} the call was given</source>
        <translation>a escala: a saída do modelo é reproduzida (com diferença de até {found:.2g}) com seus escores escalados por {label} ({used:.4g}), não pelos {expected:.4g} que a chamada recebeu</translation>
    </message>
    <message>
        <source>the KV heads are grouped by tiling (repeat) where repeat_interleave is meant: the values this call&apos;s weights were multiplied by are {kv} KV heads expanded to {h} query heads so that query head h reads KV head h % {kv} (KV heads [{got}]), where SDPA (enable_gqa), FlashAttention and transformers&apos; repeat_kv give it KV head h // {groups} ([{wanted}]); the model&apos;s other attention paths compute different attention for the same mask; expand them with repeat_interleave({groups}, dim=1) (or repeat_kv); the mask is not the cause</source>
        <translation>as cabeças KV estão agrupadas por repetição em bloco (repeat) onde se quer repeat_interleave: os valores pelos quais os pesos desta chamada foram multiplicados são {kv} cabeças KV expandidas para {h} cabeças de consulta de modo que a cabeça de consulta h lê a cabeça KV h % {kv} (cabeças KV [{got}]), onde o SDPA (enable_gqa), o FlashAttention e o repeat_kv do transformers lhe dão a cabeça KV h // {groups} ([{wanted}]); os outros caminhos de atenção do modelo calculam uma atenção diferente para a mesma máscara; expanda-as com repeat_interleave({groups}, dim=1) (ou repeat_kv); a máscara não é a causa</translation>
    </message>
    <message>
        <source>the KV heads are grouped otherwise than SDPA groups them: the values this call&apos;s weights were multiplied by are {kv} KV heads expanded to {h} query heads as KV heads [{got}], where SDPA (enable_gqa), FlashAttention and transformers&apos; repeat_kv give query head h KV head h // {groups} ([{wanted}]); the model&apos;s other attention paths compute different attention for the same mask; the mask is not the cause</source>
        <translation>as cabeças KV estão agrupadas de outro modo que o SDPA as agrupa: os valores pelos quais os pesos desta chamada foram multiplicados são {kv} cabeças KV expandidas para {h} cabeças de consulta como as cabeças KV [{got}], onde o SDPA (enable_gqa), o FlashAttention e o repeat_kv do transformers dão à cabeça de consulta h a cabeça KV h // {groups} ([{wanted}]); os outros caminhos de atenção do modelo calculam uma atenção diferente para a mesma máscara; a máscara não é a causa</translation>
    </message>
</context>
<context>
    <name>Errors</name>
    <message>
        <source>{call} recorded its attention weights only (Hugging Face output_attentions): they are shown as recorded; scores, masks and outputs cannot be recomputed, and a key with weight 0 is shown as masked</source>
        <extracomment>The scores after the call&apos;s score terms (a position bias, soft-capping, a score_mod): the same array as ``scores`` when the call has none. Token labels (B, Q) and (B, K), None without tokens (see ``compute.axes``). (B, Q) True for a query at a padding position (see ``padded_query_rows``); None: none. What the error concerns (&quot;shape&quot;, &quot;valid_lens&quot;, &quot;device&quot;, ...), for placing the message. The device ran out of memory: the CPU might do (the user decides). Every stage at once is over the memory budget (a long input: the long-context view can). The devices this machine offers (``engine.available_devices``), found by a computation that imported torch; empty when it did not get that far. The head this is the result of.</extracomment>
        <translation>{call} registrou só os seus pesos de atenção (output_attentions do Hugging Face): eles são mostrados como foram registrados; pontuações, máscaras e saídas não podem ser recalculadas, e uma chave com peso 0 aparece como mascarada</translation>
    </message>
    <message>
        <source>could not load PyTorch: {error}</source>
        <translation>não foi possível carregar o PyTorch: {error}</translation>
    </message>
    <message>
        <source>out of memory on this computer: use a smaller input</source>
        <translation>memória insuficiente neste computador: use uma entrada menor</translation>
    </message>
    <message>
        <source>unexpected error: {error}</source>
        <extracomment>What a computation&apos;s result depends on, and so when it is out of date: the document (&quot;document&quot;: the whole run, as the mask doctor reads it), the head on show too (&quot;head&quot;), or the batch element on show as well (&quot;selection&quot;). The main computation&apos;s outcome of ``snapshot`` (computations run with it; else None).
----------
What a scheduler&apos;s function takes (In) and gives (Out). The memory budget of one computation on the window&apos;s threads, in bytes. The window keeps what a computation returns several times over (the stages as arrays, the maps painted of them, a picture per view): a (4096, 4096) head, whose stages are 308 MiB, took the window to +3.0 GB. Under this budget the stages of a head up to about 1448 x 1448 (67 MiB) and the heads grid of 8 heads of 1024 x 1024 (80 MiB) are computed; a longer call is refused with its size, and the long-context view, which streams it in display bins, opens instead. What the app&apos;s compute thread runs: ``run_snapshot`` with a core left for the GUI. The result (an Out), delivered on the thread this object lives in (the GUI thread). (item, message): ``compute`` raised instead of returning (a bug: errors are data). True while a computation runs or waits. How many computations were started (for tests and the benchmark).</extracomment>
        <translation>erro inesperado: {error}</translation>
    </message>
    <message>
        <source>num_hiddens must be a whole number &gt;= 1; got {value}</source>
        <translation>num_hiddens deve ser um número inteiro &gt;= 1; veio {value}</translation>
    </message>
    <message>
        <source>dropout must be a probability between 0 and 1; got {value}</source>
        <translation>o dropout deve ser uma probabilidade entre 0 e 1; veio {value}</translation>
    </message>
    <message>
        <source>out of memory on {device} for batch {batch}, {n_q} queries x {n_k} keys (about {mib} MiB of stages); use a smaller input or another device</source>
        <translation>memória insuficiente em {device} para um lote de {batch}, {n_q} consultas x {n_k} chaves (cerca de {mib} MiB de etapas); use uma entrada menor ou outro dispositivo</translation>
    </message>
    <message>
        <source>unknown stage(s) {names} in keep: expected names from {stages}</source>
        <translation>etapa(s) desconhecida(s) {names} em keep: esperavam-se nomes entre {stages}</translation>
    </message>
    <message>
        <source>these row statistics are for {n_q} queries and {n_k} keys of size {d}; got {q} queries and {k} keys of size {dq}</source>
        <extracomment>Scores per block of query rows (8 MiB in float32). Smaller blocks pay more per-operation overhead (and, with several threads, more synchronisation); larger ones leave the cache and widen the masked strips along a band&apos;s edges. 2^20 to 2^22 measured within 10 % of each other. Cells of mask predicates (``mask_mod``) evaluated per block of rows: they are evaluated over every key a block might need, and a predicate&apos;s index arithmetic makes int64 temporaries. ``tile`` refuses larger regions (64 Mi cells, 256 MiB of float32 weights). The same in the units the overview computed in (log2 of the weights, compute dtype / float64): a tile recomputes its scores exactly as the overview did and subtracts these. The score terms bound to the call (``overview(score_terms=...)``) and the flattened element of (batch, head) they apply to: a tile applies them as the overview did.</extracomment>
        <translation>estas estatísticas de linha são para {n_q} consultas e {n_k} chaves de tamanho {d}; vieram {q} consultas e {k} chaves de tamanho {dq}</translation>
    </message>
    <message>
        <source>a tile of {rows} x {cols} is too large (at most {limit} cells); use the overview for larger regions</source>
        <translation>um recorte de {rows} x {cols} é grande demais (no máximo {limit} células); use a visão geral para regiões maiores</translation>
    </message>
    <message>
        <source>query must be a row index below {n}; got {value}</source>
        <translation>query deve ser um índice de linha menor que {n}; veio {value}</translation>
    </message>
    <message>
        <source>the scores of query {row} overflow {dtype}: the queries and keys are too large; use float64 or smaller values</source>
        <translation>as pontuações da consulta {row} estouram {dtype}: as consultas e as chaves são grandes demais; use float64 ou valores menores</translation>
    </message>
    <message>
        <source>the long-context overview does not take Sinks (a logit in the softmax); attend does</source>
        <translation>a visão geral de contexto longo não aceita Sinks (um logit no softmax); attend aceita</translation>
    </message>
    <message>
        <source>queries and keys must both be (L, d), (batch, L, d) or (batch, heads, L, d); got shapes {q} and {k}</source>
        <translation>consultas e chaves devem ser ambas (L, d), (lote, L, d) ou (lote, cabeças, L, d); vieram os formatos {q} e {k}</translation>
    </message>
    <message>
        <source>queries and keys must have the same feature size: {d_q} and {d_k}</source>
        <translation>consultas e chaves devem ter o mesmo número de características: {d_q} e {d_k}</translation>
    </message>
    <message>
        <source>the query heads ({h_q}) must be a multiple of the key heads ({h_k})</source>
        <translation>as cabeças de consulta ({h_q}) devem ser múltiplo das cabeças de chave ({h_k})</translation>
    </message>
    <message>
        <source>queries and keys need at least one row and one feature; got shapes {q} and {k}</source>
        <translation>consultas e chaves precisam de ao menos uma linha e uma característica; vieram os formatos {q} e {k}</translation>
    </message>
    <message>
        <source>{name} contain NaN or Inf at {idx}</source>
        <translation>NaN ou Inf em {name}, no índice {idx}</translation>
    </message>
    <message>
        <source>{name} must be a numeric tensor or array; got {type}</source>
        <translation>{name}: esperava-se um tensor ou array numérico; veio {type}</translation>
    </message>
    <message>
        <source>{name} must hold real numbers; got dtype {dtype}</source>
        <translation>{name}: esperavam-se números reais; veio o dtype {dtype}</translation>
    </message>
    <message>
        <source>{name} must be an index below {size}; got {value}</source>
        <translation>{name} deve ser um índice menor que {size}; veio {value}</translation>
    </message>
    <message>
        <source>dtype must be float32, float64 or None; got {value}</source>
        <translation>dtype deve ser float32, float64 ou None; veio {value}</translation>
    </message>
    <message>
        <source>bins must be (rows, cols); got {value}</source>
        <translation>bins deve ser (linhas, colunas); veio {value}</translation>
    </message>
    <message>
        <source>{name} must have at least one batch element and one row; got shape {shape}</source>
        <translation>{name}: é preciso ao menos um elemento de lote e uma linha; veio o formato {shape}</translation>
    </message>
    <message>
        <source>{name} contains {kind} at index {idx}</source>
        <translation>{kind} em {name}, no índice {idx}</translation>
    </message>
    <message>
        <source>queries</source>
        <translation>consultas</translation>
    </message>
    <message>
        <source>keys</source>
        <translation>chaves</translation>
    </message>
    <message>
        <source>values</source>
        <translation>valores</translation>
    </message>
    <message>
        <source>{name} must be True or False; got {value}</source>
        <extracomment>torch.Generator.manual_seed takes 64-bit seeds. Whole-number dtypes, signed and unsigned. ``causal``&apos;s alignments: PyTorch&apos;s is_causal (query i sees keys 0..i), and the last query lined up with the last key (a KV-cache step). What huge float valid lengths are clamped to before becoming int64: still &quot;all keys valid&quot;.</extracomment>
        <translation>{name} deve ser True ou False; recebeu {value}</translation>
    </message>
    <message>
        <source>{name} must be a whole number from 0 to 2^64 - 1; got {value}</source>
        <translation>{name} deve ser um número inteiro de 0 a 2^64 - 1; recebeu {value}</translation>
    </message>
    <message>
        <source>scale multiplies dot products (scoring &apos;dot&apos; or &apos;scaled_dot&apos;); {scoring} scoring has no scale to set</source>
        <translation>scale multiplica produtos escalares (pontuação &apos;dot&apos; ou &apos;scaled_dot&apos;); a pontuação {scoring} não tem escala a definir</translation>
    </message>
    <message>
        <source>scale must be a finite number &gt; 0; got {value}</source>
        <translation>scale deve ser um número finito &gt; 0; recebeu {value}</translation>
    </message>
    <message>
        <source>memory_budget must be a number of bytes &gt; 0 (or None for the default); got {value}</source>
        <translation>memory_budget deve ser um número de bytes &gt; 0 (ou None para o padrão); recebeu {value}</translation>
    </message>
    <message>
        <source>{name} must be 3-D or more (batch, ..., queries, features); got shape {shape}</source>
        <translation>{name} deve ter 3 ou mais dimensões (lote, ..., consultas, características); recebeu a forma {shape}</translation>
    </message>
    <message>
        <source>{name} must be 3-D or more (batch, ..., keys, features); got shape {shape}</source>
        <translation>{name} deve ter 3 ou mais dimensões (lote, ..., chaves, características); recebeu a forma {shape}</translation>
    </message>
    <message>
        <source>{name} must have at least one feature (d &gt;= 1); got shape {shape}</source>
        <translation>{name} deve ter ao menos uma característica (d &gt;= 1); recebeu a forma {shape}</translation>
    </message>
    <message>
        <source>valid_lens must have shape ({batch},) or ({batch}, {n_q}), that is (batch, queries); got shape {shape}</source>
        <translation>valid_lens deve ter forma ({batch},) ou ({batch}, {n_q}), isto é (lote, consultas); veio com forma {shape}</translation>
    </message>
    <message>
        <source>queries, keys and values must have as many dimensions; got shapes {q}, {k} and {v}</source>
        <translation>consultas, chaves e valores devem ter o mesmo número de dimensões; recebeu as formas {q}, {k} e {v}</translation>
    </message>
    <message>
        <source>batch sizes differ: queries {q}, keys {k}, values {v}</source>
        <translation>os tamanhos de lote diferem: consultas {q}, chaves {k}, valores {v}</translation>
    </message>
    <message>
        <source>keys and values must have the same leading dimensions: keys {k}, values {v}</source>
        <translation>chaves e valores devem ter as mesmas dimensões iniciais: chaves {k}, valores {v}</translation>
    </message>
    <message>
        <source>keys and values must pair up: {k} keys but {v} values</source>
        <translation>chaves e valores devem formar pares: {k} chaves mas {v} valores</translation>
    </message>
    <message>
        <source>queries and keys must have the same leading dimensions: queries {q}, keys {k}</source>
        <translation>consultas e chaves devem ter as mesmas dimensões iniciais: consultas {q}, chaves {k}</translation>
    </message>
    <message>
        <source>queries have {h_q} heads but keys and values {h_k} (dimension -3): pass enable_gqa=True for grouped-query attention</source>
        <translation>as consultas têm {h_q} cabeças, mas chaves e valores têm {h_k} (dimensão -3): passe enable_gqa=True para atenção com consultas agrupadas</translation>
    </message>
    <message>
        <source>grouped-query attention needs the query heads to be a multiple of the key/value heads: {h_q} query heads, {h_k} key/value heads</source>
        <translation>a atenção com consultas agrupadas exige que as cabeças de consulta sejam múltiplo das cabeças de chave/valor: {h_q} cabeças de consulta, {h_k} cabeças de chave/valor</translation>
    </message>
    <message>
        <source>{scoring} scoring needs queries and keys of the same length: d_q = {d_q}, d_k = {d_k} (additive or bilinear scoring accept different lengths)</source>
        <translation>a pontuação {scoring} exige consultas e chaves do mesmo comprimento: d_q = {d_q}, d_k = {d_k} (as pontuações aditiva e bilinear aceitam comprimentos diferentes)</translation>
    </message>
    <message>
        <source>params must map parameter names to tensors; got {type}</source>
        <translation>params deve mapear nomes de parâmetros em tensores; recebeu {type}</translation>
    </message>
    <message>
        <source>parameter {key} must be a tensor or array of numbers; got {type}</source>
        <translation>o parâmetro {key} deve ser um tensor ou arranjo de números; recebeu {type}</translation>
    </message>
    <message>
        <source>parameter {key} must hold real numbers; got dtype {dtype} on {device}</source>
        <translation>o parâmetro {key} deve conter números reais; recebeu dtype {dtype} em {device}</translation>
    </message>
    <message>
        <source>dtype must be one of {choices}; got {value}</source>
        <translation>o dtype deve ser um destes: {choices}; veio {value}</translation>
    </message>
    <message>
        <source>unknown device {value}: expected &apos;auto&apos;, &apos;cpu&apos;, &apos;cuda&apos;, &apos;cuda:N&apos; or &apos;mps&apos;</source>
        <translation>dispositivo desconhecido {value}: esperava-se &apos;auto&apos;, &apos;cpu&apos;, &apos;cuda&apos;, &apos;cuda:N&apos; ou &apos;mps&apos;</translation>
    </message>
    <message>
        <source>{n} CUDA device</source>
        <translation>{n} dispositivo CUDA</translation>
    </message>
    <message>
        <source>{n} CUDA devices</source>
        <translation>{n} dispositivos CUDA</translation>
    </message>
    <message>
        <source>no CUDA device</source>
        <translation>nenhum dispositivo CUDA</translation>
    </message>
    <message>
        <source>device &apos;{device}&apos; is not available: this machine has {have}</source>
        <translation>o dispositivo &apos;{device}&apos; não está disponível: esta máquina tem {have}</translation>
    </message>
    <message>
        <source>device &apos;mps&apos; is not available: this machine has no Apple GPU (MPS)</source>
        <translation>o dispositivo &apos;mps&apos; não está disponível: esta máquina não tem GPU Apple (MPS)</translation>
    </message>
    <message>
        <source>device &apos;{device}&apos; is not supported: use one of {choices}</source>
        <translation>o dispositivo &apos;{device}&apos; não é suportado: use um destes: {choices}</translation>
    </message>
    <message>
        <source>X must be a floating-point tensor of scores; got {got}</source>
        <translation>X deve ser um tensor de pontuações em ponto flutuante; recebeu {got}</translation>
    </message>
    <message>
        <source>{name} is on the &apos;meta&apos; device, which holds no values</source>
        <translation>{name} está no dispositivo &apos;meta&apos;, que não guarda valores</translation>
    </message>
    <message>
        <source>X must be 3-D (batch, queries, keys); got shape {shape}</source>
        <translation>X deve ser 3-D (lote, consultas, chaves); veio o formato {shape}</translation>
    </message>
    <message>
        <source>dot-product attention needs queries and keys of the same length: d_q = {d_q}, d_k = {d_k}</source>
        <extracomment>Largest feature block built at once, in elements (64 MiB in float32).</extracomment>
        <translation>a atenção por produto escalar exige consultas e chaves do mesmo comprimento: d_q = {d_q}, d_k = {d_k}</translation>
    </message>
    <message>
        <source>unknown convention {value}: expected one of {choices}</source>
        <translation>convenção desconhecida {value}: esperava-se uma destas: {choices}</translation>
    </message>
    <message>
        <source>compare_conventions runs every mask mode itself: do not pass {name}</source>
        <translation>compare_conventions executa ele mesmo todos os modos de máscara: não passe {name}</translation>
    </message>
    <message>
        <source>the masking lab ({runs} conventions, each keeping its weights, mask and masked scores)</source>
        <translation>o laboratório de máscaras ({runs} convenções, cada uma guardando seus pesos, máscara e pontuações mascaradas)</translation>
    </message>
    <message>
        <source>unknown mask_mode {value}: expected one of {choices}</source>
        <extracomment>The fill value of the book&apos;s ``masked_softmax``. Turn (scores, allowed) into the tensor the softmax sees. Rows with no allowed key get zero weights (instead of whatever the softmax gives). The mask is read with the opposite polarity (True = ignore). The value masked scores are replaced by, when the mode is a plain fill (None: it is not). A plain fill lets the engine mask a row&apos;s tail in place instead of building a mask. The error for a name that is not in ``MASK_MODES``.</extracomment>
        <translation>mask_mode desconhecido {value}: esperava-se um destes: {choices}</translation>
    </message>
    <message>
        <source>valid_lens must hold whole numbers; got {type}</source>
        <translation>valid_lens deve conter números inteiros; recebeu {type}</translation>
    </message>
    <message>
        <source>valid_lens must hold whole numbers, got dtype {dtype}</source>
        <translation>valid_lens deve conter números inteiros, veio o dtype {dtype}</translation>
    </message>
    <message>
        <source>valid_lens contains NaN</source>
        <translation>valid_lens contém NaN</translation>
    </message>
    <message>
        <source>valid_lens contains an infinite value</source>
        <translation>valid_lens contém um valor infinito</translation>
    </message>
    <message>
        <source>valid lengths must be whole numbers; got {value}</source>
        <translation>os comprimentos válidos devem ser números inteiros; veio {value}</translation>
    </message>
    <message>
        <source>valid lengths must be &gt;= 0; got {value}</source>
        <translation>os comprimentos válidos devem ser &gt;= 0; veio {value}</translation>
    </message>
    <message>
        <source>{name} of shape {shape} does not broadcast to {target} (..., queries, keys); expected a shape such as {examples}</source>
        <translation>{name} de forma {shape} não se propaga (broadcast) para {target} (..., consultas, chaves); esperava uma forma como {examples}</translation>
    </message>
    <message>
        <source>{name} contains NaN or +inf: an additive mask may hold 0, negative numbers and -inf</source>
        <translation>{name} contém NaN ou +inf: uma máscara aditiva pode conter 0, números negativos e -inf</translation>
    </message>
    <message>
        <source>{name} must have shape {shape} (batch, keys); got {got}</source>
        <translation>{name} deve ter a forma {shape} (lote, chaves); recebeu {got}</translation>
    </message>
    <message>
        <source>attn_mask must be a boolean tensor (True = attend) or a float tensor added to the scores, as torch SDPA reads it; got dtype {dtype} (a Hugging Face 0/1 mask goes through attention_mask=)</source>
        <extracomment>What a mask argument that is added to the scores when it is a float must be.</extracomment>
        <translation>attn_mask deve ser um tensor booleano (True = atender) ou um tensor de ponto flutuante somado às pontuações, como o SDPA do torch o lê; recebeu dtype {dtype} (uma máscara 0/1 do Hugging Face passa por attention_mask=)</translation>
    </message>
    <message>
        <source>key_padding_mask must be a boolean tensor (True = ignore) or a float tensor added to the scores, as nn.MultiheadAttention reads it; got dtype {dtype}</source>
        <translation>key_padding_mask deve ser um tensor booleano (True = ignorar) ou um tensor de ponto flutuante somado às pontuações, como nn.MultiheadAttention o lê; recebeu dtype {dtype}</translation>
    </message>
    <message>
        <source>attention_mask must hold 0 and 1 (1 = attend); got dtype {dtype}</source>
        <translation>attention_mask deve conter 0 e 1 (1 = atender); recebeu dtype {dtype}</translation>
    </message>
    <message>
        <source>attention_mask must hold 0 and 1 (1 = attend), as Hugging Face tokenizers return it; got {value}. An additive mask (0 and large negative numbers) goes through attn_mask=</source>
        <translation>attention_mask deve conter 0 e 1 (1 = atender), como os tokenizadores do Hugging Face o devolvem; recebeu {value}. Uma máscara aditiva (0 e números negativos grandes) passa por attn_mask=</translation>
    </message>
    <message>
        <source>causal must be None, True, &apos;top_left&apos; or &apos;bottom_right&apos;; got {value}</source>
        <translation>causal deve ser None, True, &apos;top_left&apos; ou &apos;bottom_right&apos;; veio {value}</translation>
    </message>
    <message>
        <source>{name} must be a whole number &gt;= {low}; got {value}</source>
        <extracomment>The d of the default curves: 1, 2, 4, ..., 1024. Names of the per-d statistics in ``scaling_curves`` (each also with &quot;_scaled&quot;/&quot;_unscaled&quot;). Peak bytes per (batch, query, key) cell, measured with every key allowed (66 and 35 on (1, 2048, 2048)) plus a margin: ``current_point`` holds float64 scores, their scaled copy, the masked rows and the softmax&apos;s working copies; ``tanh_saturation`` the allowed mask and the indices of the allowed pairs.</extracomment>
        <translation>{name} deve ser um número inteiro &gt;= {low}; veio {value}</translation>
    </message>
    <message>
        <source>dims must be a non-empty list of whole numbers &gt;= 1; got {value}</source>
        <translation>dims deve ser uma lista não vazia de números inteiros &gt;= 1; veio {value}</translation>
    </message>
    <message>
        <source>dims above 65536 are not supported; got {value}</source>
        <translation>valores de dims acima de 65536 não são suportados; veio {value}</translation>
    </message>
    <message>
        <source>{name} must be 3-D (batch, rows, features) and not empty; got shape {shape}</source>
        <translation>{name}: esperava-se 3-D (lote, linhas, características) e não vazio; veio o formato {shape}</translation>
    </message>
    <message>
        <source>{name} contains NaN or Inf</source>
        <translation>NaN ou Inf em {name}</translation>
    </message>
    <message>
        <source>computing the scaling statistics of the current inputs</source>
        <translation>calcular as estatísticas de escala das entradas atuais</translation>
    </message>
    <message>
        <source>computing the tanh saturation of the current inputs</source>
        <translation>calcular a saturação da tanh das entradas atuais</translation>
    </message>
    <message>
        <source>batch sizes differ: queries {q}, keys {k}</source>
        <translation>os tamanhos de lote diferem: consultas {q}, chaves {k}</translation>
    </message>
    <message>
        <source>the scaling view compares dot products, which need queries and keys of the same length: d_q = {d_q}, d_k = {d_k}</source>
        <translation>o laboratório de escala compara produtos escalares, que exigem consultas e chaves do mesmo comprimento: d_q = {d_q}, d_k = {d_k}</translation>
    </message>
    <message>
        <source>threshold must be between 0 and 1; got {value}</source>
        <translation>threshold deve estar entre 0 e 1; veio {value}</translation>
    </message>
    <message>
        <source>unknown scoring function {value}: expected one of {choices}</source>
        <extracomment>The label and LaTeX of a(q, k) shown in the app: a built-in&apos;s come from ``attnviz.state.catalog`` (set by ``register``), a new one sets its own. Queries and keys must have the same length d. A dot product q.k, which SDPA&apos;s ``scale`` multiplies (learnable or kernel scorings have none). The error for a name that is not in ``SCORINGS``.</extracomment>
        <translation>função de pontuação desconhecida {value}: esperava-se uma destas: {choices}</translation>
    </message>
    <message>
        <source>{scoring} scoring needs parameter {key} of shape {shape}; it is missing</source>
        <translation>a pontuação {scoring} exige o parâmetro {key} de formato {shape}, que está faltando</translation>
    </message>
    <message>
        <source>{scoring} parameter {key} must have shape {shape} for d_q={d_q}, d_k={d_k}, num_hiddens={num_hiddens}; got {got}</source>
        <translation>o parâmetro {key} de {scoring} deve ter formato {shape} para d_q={d_q}, d_k={d_k}, num_hiddens={num_hiddens}; veio {got}</translation>
    </message>
    <message>
        <source>{scoring} parameter {key} contains NaN or Inf</source>
        <translation>o parâmetro {key} de {scoring} contém NaN ou Inf</translation>
    </message>
    <message>
        <source>keep fewer stages: keep=(&apos;weights&apos;, &apos;output&apos;) needs about {size}</source>
        <extracomment>The default budget of one computation, in bytes. Elements of one block of scores (rows x K): 1 Mi floats = 4 MiB, a few of which stay in the L3 cache; smaller blocks cost more in per-operation overhead than they gain (measured). Elements of the largest temporary a scoring function may build per block (additive attention&apos;s features): 16 Mi floats = 64 MiB in float32. Block-sized temporaries alive at once: raw, scaled and masked scores, weights, the mask and the bias of the block, a dropout mask, and the diagnostics&apos; working copies. Below this a computation fits in any machine that runs attnviz: the available memory is not read.</extracomment>
        <translation>guardar menos etapas: keep=(&apos;weights&apos;, &apos;output&apos;) precisa de cerca de {size}</translation>
    </message>
    <message>
        <source>a smaller batch: {fits} of the {batch} at a time</source>
        <translation>um lote menor: {fits} dos {batch} de cada vez</translation>
    </message>
    <message>
        <source>a smaller batch with fewer stages: {fits} of the {batch} at a time with keep=(&apos;weights&apos;, &apos;output&apos;)</source>
        <translation>um lote menor com menos etapas: {fits} dos {batch} de cada vez com keep=(&apos;weights&apos;, &apos;output&apos;)</translation>
    </message>
    <message>
        <source>the long-context overview, which summarises long inputs without holding their full matrices</source>
        <translation>a visão geral de contexto longo, que resume entradas longas sem guardar suas matrizes inteiras</translation>
    </message>
    <message>
        <source>a larger memory_budget= (bytes)</source>
        <translation>um memory_budget= maior (bytes)</translation>
    </message>
    <message>
        <source>{budget} (half of the {available} of memory available now)</source>
        <translation>{budget} (metade dos {available} de memória disponíveis agora)</translation>
    </message>
    <message>
        <source>fewer queries or keys</source>
        <translation>menos consultas ou chaves</translation>
    </message>
    <message>
        <source>{what} on inputs of shape {shape} needs about {needed}, more than the memory budget of {budget}. What would fit: {advice}</source>
        <translation>{what} em entradas de formato {shape} precisa de cerca de {needed}, mais que o orçamento de memória de {budget}. O que caberia: {advice}</translation>
    </message>
    <message>
        <source>attention of shape {shape} keeping {kept} needs about {needed} (one float stage is {stage}), more than the memory budget of {budget}. What would fit: {advice}</source>
        <translation>a atenção de forma {shape} guardando {kept} precisa de cerca de {needed} (uma etapa em ponto flutuante ocupa {stage}), mais que o orçamento de memória de {budget}. O que caberia: {advice}</translation>
    </message>
    <message>
        <source>a dense mask of {n_q} x {n_k} is too large (at most {limit} cells); use the block structure or the streaming overview instead</source>
        <extracomment>``dense`` refuses larger masks (64 Mi cells = 64 MiB of booleans): long inputs use blocks. Cells a predicate is evaluated on at once (its int64 temporaries: 8 MiB each); read when a description is bound. What a predicate&apos;s evaluation over one of ``attend``&apos;s blocks holds: its int64 index arithmetic (a few temporaries of the block&apos;s size).</extracomment>
        <translation>uma máscara densa de {n_q} x {n_k} é grande demais (no máximo {limit} células); use a estrutura em blocos ou a visão geral em fluxo (streaming)</translation>
    </message>
    <message>
        <source>a mask combines Mask descriptions only; got {type}</source>
        <translation>uma máscara só combina descrições Mask; veio {type}</translation>
    </message>
    <message>
        <source>documents: with {n_q} queries and {n_k} keys, pass query_ids too (one document id per query)</source>
        <translation>documents: com {n_q} consultas e {n_k} chaves, passe também query_ids (um id de documento por consulta)</translation>
    </message>
    <message>
        <source>attention_mask must hold 0 (padding) and 1 (attend) only, as Hugging Face&apos;s does</source>
        <extracomment>``name``: what the user called it, for error messages.</extracomment>
        <translation>attention_mask deve conter só 0 (padding) e 1 (atender), como a do Hugging Face</translation>
    </message>
    <message>
        <source>mask_mod must be a function (b, h, q_idx, kv_idx) -&gt; bool tensor; got {type}</source>
        <translation>mask_mod deve ser uma função (b, h, q_idx, kv_idx) -&gt; tensor bool; veio {type}</translation>
    </message>
    <message>
        <source>mask_mod failed: {error}</source>
        <translation>mask_mod falhou: {error}</translation>
    </message>
    <message>
        <source>mask_mod must return a bool tensor; got {type}</source>
        <extracomment>Set once the function failed on index grids: evaluated one scalar at a time under vmap.</extracomment>
        <translation>mask_mod deve devolver um tensor bool; veio {type}</translation>
    </message>
    <message>
        <source>mask_mod returned shape {shape} for one (b, h, q_idx, kv_idx)</source>
        <translation>mask_mod retornou a forma {shape} para um (b, h, q_idx, kv_idx)</translation>
    </message>
    <message>
        <source>mask_mod returned shape {shape} for indices of shape {q} and {kv}</source>
        <translation>mask_mod devolveu o formato {shape} para índices de formato {q} e {kv}</translation>
    </message>
    <message>
        <source>sinks need a window: the sink tokens are what a query sees beyond its window</source>
        <translation>sinks exige uma janela: os tokens sumidouros são o que uma consulta vê além da sua janela</translation>
    </message>
    <message>
        <source>{name} must have shape ({n},) or (batch, {n}); got {shape}</source>
        <translation>{name} deve ter formato ({n},) ou (lote, {n}); veio {shape}</translation>
    </message>
    <message>
        <source>{name} must hold whole numbers; got dtype {dtype}</source>
        <translation>{name} deve conter números inteiros; veio o dtype {dtype}</translation>
    </message>
    <message>
        <source>{name} has {size} batch element(s); batch {batch} was asked for</source>
        <translation>{name} tem {size} elemento(s) de lote; foi pedido o lote {batch}</translation>
    </message>
    <message>
        <source>{name} has {size} batch elements for a batch of {batch}</source>
        <translation>{name} tem {size} elementos de lote para um lote de {batch}</translation>
    </message>
    <message>
        <source>{name} must be a boolean tensor; got dtype {dtype}</source>
        <translation>{name} deve ser um tensor booleano; veio o dtype {dtype}</translation>
    </message>
    <message>
        <source>{name} must be a whole number &gt;= {minimum}; got {value}</source>
        <translation>{name} deve ser um número inteiro &gt;= {minimum}; veio {value}</translation>
    </message>
    <message>
        <source>{name} must be a slice with step 1; got {value}</source>
        <translation>{name} deve ser uma fatia (slice) com passo 1; veio {value}</translation>
    </message>
    <message>
        <source>{name} {value} selects nothing of {n}</source>
        <translation>{name} {value} não seleciona nada de {n}</translation>
    </message>
    <message>
        <source>{name} holds a value that is not finite at {idx}: a score bias is added to the scores and never masks (a mask goes through attn_mask= or mask=)</source>
        <extracomment>A term that acts in the softmax (``Sinks``), not on the scores.</extracomment>
        <translation>{name} contém um valor não finito em {idx}: um viés de pontuações é somado às pontuações e nunca mascara (uma máscara vai por attn_mask= ou mask=)</translation>
    </message>
    <message>
        <source>a soft cap must be a finite number &gt; 0; got {value}</source>
        <translation>um limite suave (soft cap) deve ser um número finito &gt; 0; recebeu {value}</translation>
    </message>
    <message>
        <source>{name} needs one finite slope per head ({heads}); got {count} values</source>
        <translation>{name} precisa de uma inclinação finita por cabeça ({heads}); recebidos {count} valores</translation>
    </message>
    <message>
        <source>score_mod must be a function (score, b, h, q_idx, kv_idx) -&gt; score; got {type}</source>
        <extracomment>FlexAttention&apos;s score_mod: (score, batch, head, q_idx, kv_idx) -&gt; score.</extracomment>
        <translation>score_mod deve ser uma função (score, b, h, q_idx, kv_idx) -&gt; score; recebido {type}</translation>
    </message>
    <message>
        <source>score_mod failed: {error}</source>
        <translation>score_mod falhou: {error}</translation>
    </message>
    <message>
        <source>score_mod must return one score per score; got {value}</source>
        <translation>score_mod deve devolver um escore por escore; recebido {value}</translation>
    </message>
    <message>
        <source>{name} needs one finite sink logit per head ({heads}); got {count} values</source>
        <translation>{name} precisa de um logit de sorvedouro finito por cabeça ({heads}); recebidos {count} valores</translation>
    </message>
    <message>
        <source>{name} needs one finite sink logit per head, or per query of each head {shape}; got {got}</source>
        <translation>{name} precisa de um logit de sorvedouro finito por cabeça, ou por consulta de cada cabeça {shape}; recebeu {got}</translation>
    </message>
    <message>
        <source>score_terms must be ScoreTerm descriptions (ScoreBias, SoftCap, Alibi, ScoreMod, Sinks); got {value}</source>
        <translation>score_terms devem ser descrições ScoreTerm (ScoreBias, SoftCap, Alibi, ScoreMod, Sinks); recebido {value}</translation>
    </message>
    <message>
        <source>a mask combines Mask descriptions only (or a FlexAttention BlockMask, a mask_mod function); got {type}</source>
        <translation>uma máscara combina apenas descrições Mask (ou um BlockMask do FlexAttention, uma função mask_mod); recebido {type}</translation>
    </message>
</context>
<context>
    <name>Export</name>
    <message>
        <source>has an unknown image extension; use .png or .svg</source>
        <extracomment>Which ViewData arrays can be exported, by the name used in menus and file names. What a CSS pixel is taken to be: a figure laid out at W x H pixels prints W/96 inches wide.</extracomment>
        <translation>tem uma extensão de imagem desconhecida; use .png ou .svg</translation>
    </message>
    <message>
        <source>cannot be written: the picture has no size</source>
        <translation>não pode ser gravado: a imagem não tem tamanho</translation>
    </message>
    <message>
        <source>cannot export &apos;{what}&apos;; choose one of {choices}</source>
        <translation>não é possível exportar &apos;{what}&apos;; escolha um destes: {choices}</translation>
    </message>
    <message>
        <source>has an unknown extension; use {choices}</source>
        <translation>tem uma extensão desconhecida; use {choices}</translation>
    </message>
    <message>
        <source>no valid lengths</source>
        <extracomment>Smallest heatmap the figure lays out (HeatmapWidget&apos;s own minimum is 480 x 200).</extracomment>
        <translation>sem comprimentos válidos</translation>
    </message>
    <message>
        <source>valid lengths 1-D</source>
        <translation>comprimentos válidos 1-D</translation>
    </message>
    <message>
        <source>valid lengths 2-D</source>
        <translation>comprimentos válidos 2-D</translation>
    </message>
    <message>
        <source>scoring {scoring} · mask {mask_mode} · {lengths} · causal {causal} · {dtype} · Q {q} K {k} V {v}</source>
        <translation>pontuação {scoring} · máscara {mask_mode} · {lengths} · causal {causal} · {dtype} · Q {q} K {k} V {v}</translation>
    </message>
    <message>
        <source>off</source>
        <translation>desligada</translation>
    </message>
    <message>
        <source>score multiplier {value}</source>
        <translation>multiplicador das pontuações {value}</translation>
    </message>
    <message>
        <source>on</source>
        <translation>ligado</translation>
    </message>
    <message>
        <source>Attention weights</source>
        <translation>Pesos de atenção</translation>
    </message>
    <message>
        <source>no batch element to draw</source>
        <translation>nenhum elemento do lote para desenhar</translation>
    </message>
    <message>
        <source>batch {b} is out of range: the result has {n} batch element(s), 0-{last}</source>
        <translation>o lote {b} está fora do intervalo: o resultado tem {n} elemento(s) de lote, 0-{last}</translation>
    </message>
    <message>
        <source>size {size} is too small for {n} heatmap(s): at least {least}</source>
        <translation>o tamanho {size} é pequeno demais para {n} mapa(s) de calor: no mínimo {least}</translation>
    </message>
    <message>
        <source>batch {b} of {n}</source>
        <translation>lote {b} de {n}</translation>
    </message>
</context>
<context>
    <name>FileActions</name>
    <message>
        <source>attention map</source>
        <extracomment>What the exports and refusals call each result array.</extracomment>
        <translation>mapa de atenção</translation>
    </message>
    <message>
        <source>weights</source>
        <translation>pesos</translation>
    </message>
    <message>
        <source>output</source>
        <translation>saída</translation>
    </message>
    <message>
        <source>attnviz sessions</source>
        <translation>Sessões do attnviz</translation>
    </message>
    <message>
        <source>Tensor files</source>
        <translation>Arquivos de tensores</translation>
    </message>
    <message>
        <source>All files</source>
        <translation>Todos os arquivos</translation>
    </message>
    <message>
        <source>attnviz session</source>
        <translation>Sessão do attnviz</translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation>&amp;Abrir…</translation>
    </message>
    <message>
        <source>Open a session (.attnviz) or a tensor file (.npy, .npz, .pt, .safetensors)</source>
        <extracomment>An Open is over: True when the inputs were replaced (False: refused, cancelled, superseded). Replaced by tests: (parent, tensor file, guessed roles, current state) -&gt; choice or None.</extracomment>
        <translation>Abre uma sessão (.attnviz) ou um arquivo de tensores (.npy, .npz, .pt, .safetensors)</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>&amp;Salvar</translation>
    </message>
    <message>
        <source>Save the inputs and settings as a session (.attnviz)</source>
        <translation>Salva as entradas e as configurações como uma sessão (.attnviz)</translation>
    </message>
    <message>
        <source>Save &amp;As…</source>
        <translation>Salvar c&amp;omo…</translation>
    </message>
    <message>
        <source>Save the session under a new name</source>
        <translation>Salva a sessão com um novo nome</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>Abrir rece&amp;nte</translation>
    </message>
    <message>
        <source>&amp;Export</source>
        <translation>&amp;Exportar</translation>
    </message>
    <message>
        <source>Weights heatmaps as &amp;PNG…</source>
        <extracomment>The app shows every batch element up to this many (results_panel.MAX_GRID), else the selected one.</extracomment>
        <translation>Mapas de calor dos pesos em &amp;PNG…</translation>
    </message>
    <message>
        <source>Sessions, captures and tensor files</source>
        <translation>Sessões, capturas e arquivos de tensores</translation>
    </message>
    <message>
        <source>Captures (attnviz.capture)</source>
        <translation>Capturas (attnviz.capture)</translation>
    </message>
    <message>
        <source>{count} ranks merged</source>
        <extracomment>Asks which array plays which role: (roles, head, layer), or None when the user cancelled. A file still opening after this long gets the busy indicator (a quick one would only flash it).</extracomment>
        <translation>{count} ranks combinados</translation>
    </message>
    <message>
        <source>Opening {name}…</source>
        <translation>Abrindo {name}…</translation>
    </message>
    <message>
        <source>Reading the file</source>
        <translation>Lendo o arquivo</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancelar</translation>
    </message>
    <message>
        <source>Stop opening this file; the inputs stay as they are</source>
        <translation>Parar de abrir este arquivo; as entradas ficam como estão</translation>
    </message>
    <message>
        <source>The attention-weight heatmaps as a PNG image</source>
        <translation>Os mapas de calor dos pesos de atenção como imagem PNG</translation>
    </message>
    <message>
        <source>Weights heatmaps as &amp;SVG…</source>
        <translation>Mapas de calor dos pesos em &amp;SVG…</translation>
    </message>
    <message>
        <source>The attention-weight heatmaps as an SVG drawing</source>
        <translation>Os mapas de calor dos pesos de atenção como desenho SVG</translation>
    </message>
    <message>
        <source>Weights as &amp;CSV…</source>
        <translation>Pesos em &amp;CSV…</translation>
    </message>
    <message>
        <source>Attention weights, one block per batch element</source>
        <translation>Pesos de atenção, um bloco por elemento do lote</translation>
    </message>
    <message>
        <source>Weights as &amp;NumPy .npy…</source>
        <translation>Pesos em &amp;NumPy .npy…</translation>
    </message>
    <message>
        <source>Attention weights (batch, queries, keys)</source>
        <translation>Pesos de atenção (lote, consultas, chaves)</translation>
    </message>
    <message>
        <source>Output as C&amp;SV…</source>
        <translation>Saída em CS&amp;V…</translation>
    </message>
    <message>
        <source>Attention output, one block per batch element</source>
        <translation>Saída da atenção, um bloco por elemento do lote</translation>
    </message>
    <message>
        <source>Output as N&amp;umPy .npy…</source>
        <translation>Saída em N&amp;umPy .npy…</translation>
    </message>
    <message>
        <source>Attention output (batch, queries, d_v)</source>
        <translation>Saída da atenção (lote, consultas, d_v)</translation>
    </message>
    <message>
        <source>{name} (tensors)</source>
        <extracomment>The name of an opened tensor file (not a session: Save asks for a name), else None. The session ended: no more reading, writing or asking.</extracomment>
        <translation>{name} (tensores)</translation>
    </message>
    <message>
        <source>untitled</source>
        <translation>sem título</translation>
    </message>
    <message>
        <source>Open session or tensors</source>
        <translation>Abrir sessão ou tensores</translation>
    </message>
    <message>
        <source>Opening {name} cancelled</source>
        <translation>Abertura de {name} cancelada</translation>
    </message>
    <message>
        <source>Cannot open file</source>
        <translation>Não foi possível abrir o arquivo</translation>
    </message>
    <message>
        <source>{name}: unexpected error: {error}</source>
        <translation>{name}: erro inesperado: {error}</translation>
    </message>
    <message>
        <source>Open {name}</source>
        <translation>Abrir {name}</translation>
    </message>
    <message>
        <source>Opened {name}</source>
        <translation>{name} aberto</translation>
    </message>
    <message>
        <source>Save session</source>
        <translation>Salvar sessão</translation>
    </message>
    <message>
        <source>Cannot save</source>
        <translation>Não foi possível salvar</translation>
    </message>
    <message>
        <source>Saved {path}</source>
        <translation>{path} salvo</translation>
    </message>
    <message>
        <source>No recent files</source>
        <translation>Nenhum arquivo recente</translation>
    </message>
    <message>
        <source>&amp;Clear list</source>
        <translation>&amp;Limpar a lista</translation>
    </message>
    <message>
        <source>Nothing to export</source>
        <translation>Nada para exportar</translation>
    </message>
    <message>
        <source>There is no {what} for the current inputs yet; wait until the status bar says “up to date”.</source>
        <translation>Ainda não há {what} para as entradas atuais; espere até a barra de status dizer “atualizado”.</translation>
    </message>
    <message>
        <source>The current inputs give an error, so there is no {what}: {error}</source>
        <translation>As entradas atuais dão erro, então não há {what}: {error}</translation>
    </message>
    <message>
        <source>PNG image</source>
        <translation>Imagem PNG</translation>
    </message>
    <message>
        <source>SVG drawing</source>
        <translation>Desenho SVG</translation>
    </message>
    <message>
        <source>Export weights heatmaps</source>
        <translation>Exportar mapas de calor dos pesos</translation>
    </message>
    <message>
        <source>{name}: attention weights</source>
        <translation>{name}: pesos de atenção</translation>
    </message>
    <message>
        <source>Cannot export</source>
        <translation>Não foi possível exportar</translation>
    </message>
    <message>
        <source>Exported {path}</source>
        <translation>{path} exportado</translation>
    </message>
    <message>
        <source>NumPy array</source>
        <translation>Array NumPy</translation>
    </message>
    <message>
        <source>Export {what}</source>
        <translation>Exportar {what}</translation>
    </message>
    <message>
        <source>Exported {what} to {path}</source>
        <translation>Exportação concluída: {what} em {path}</translation>
    </message>
    <message>
        <source>Autosave failed: {error}</source>
        <extracomment>Autosave this long after the first unsaved change (further changes ride along).</extracomment>
        <translation>O salvamento automático falhou: {error}</translation>
    </message>
    <message>
        <source>Autosave unreadable</source>
        <translation>Salvamento automático ilegível</translation>
    </message>
    <message>
        <source>{error}. It has been discarded.</source>
        <translation>{error}. Ele foi descartado.</translation>
    </message>
    <message>
        <source>recently</source>
        <translation>recentemente</translation>
    </message>
    <message>
        <source>Other windows that did not close normally left {n} more autosave(s): answer No to see the next one; after a Yes they are offered at the next start.</source>
        <translation>Outras janelas que não foram fechadas normalmente deixaram mais {n} salvamento(s) automático(s): responda Não para ver o próximo; depois de um Sim, os demais serão oferecidos na próxima inicialização.</translation>
    </message>
    <message>
        <source>Restore unsaved work?</source>
        <translation>Restaurar o trabalho não salvo?</translation>
    </message>
    <message>
        <source>attnviz did not close normally last time. Restore the inputs autosaved {when}?</source>
        <translation>O attnviz não foi fechado normalmente da última vez. Restaurar as entradas salvas automaticamente ({when})?</translation>
    </message>
    <message>
        <source>Restore autosaved inputs</source>
        <translation>Restaurar as entradas salvas automaticamente</translation>
    </message>
</context>
<context>
    <name>FileErrors</name>
    <message>
        <source>bool, integers, float16, bfloat16, float32, float64</source>
        <translation>bool, inteiros, float16, bfloat16, float32, float64</translation>
    </message>
    <message>
        <source>holds Python objects (dtype object), which can only be loaded by running code from the file</source>
        <extracomment>Characters of text a reader parses as one JSON list of labels (safetensors metadata): parsed, a long list of short strings takes tens of times its length in memory. Characters of all the text arrays of one file together, as numpy stores them (every string at the widest one&apos;s width, 4 bytes a character: 64 MiB). Every reader&apos;s labels and tokens count against it: two lists of 131,072 tokens up to 64 characters wide fit.</extracomment>
        <translation>contém objetos Python (dtype object), que só podem ser carregados executando código do arquivo</translation>
    </message>
    <message>
        <source>has a structured dtype ({dtype}); only plain numeric arrays are supported</source>
        <translation>tem um dtype estruturado ({dtype}); só arrays numéricos simples são suportados</translation>
    </message>
    <message>
        <source>holds complex numbers ({dtype}); attention tensors must be real ({accepted})</source>
        <translation>contém números complexos ({dtype}); os tensores de atenção devem ser reais ({accepted})</translation>
    </message>
    <message>
        <source>holds text (dtype {dtype}), not numbers</source>
        <translation>contém texto (dtype {dtype}), não números</translation>
    </message>
    <message>
        <source>holds dates or times (dtype {dtype}), not numbers</source>
        <translation>contém datas ou horas (dtype {dtype}), não números</translation>
    </message>
    <message>
        <source>has dtype {dtype}, which is not supported ({accepted})</source>
        <translation>tem o dtype {dtype}, que não é suportado ({accepted})</translation>
    </message>
    <message>
        <source>array &apos;{name}&apos; {problem}</source>
        <translation>o array &apos;{name}&apos; {problem}</translation>
    </message>
    <message>
        <source>has a negative dimension in its shape {shape}</source>
        <translation>tem uma dimensão negativa em seu formato {shape}</translation>
    </message>
    <message>
        <source>{count} elements ({size})</source>
        <translation>{count} elementos ({size})</translation>
    </message>
    <message>
        <source>holds {size}, more than the {limit} allowed</source>
        <translation>contém {size}, mais que os {limit} permitidos</translation>
    </message>
    <message>
        <source>its arrays hold more than the {limit} elements allowed in total (reached at {where})</source>
        <translation>seus arrays contêm mais que os {limit} elementos permitidos no total (limite atingido {where})</translation>
    </message>
    <message>
        <source>its arrays need more than the {limit} allowed in total (reached at {where})</source>
        <translation>seus arrays precisam de mais que os {limit} permitidos no total (limite atingido {where})</translation>
    </message>
    <message>
        <source>holds text of shape {shape}: text labels come as (length,) or (batch, length)</source>
        <translation>contém texto de formato {shape}: rótulos de texto vêm como (comprimento,) ou (lote, comprimento)</translation>
    </message>
    <message>
        <source>holds text {width} characters wide (labels of at most {limit} are read)</source>
        <translation>contém texto de {width} caracteres de largura (são lidos rótulos de no máximo {limit})</translation>
    </message>
    <message>
        <source>takes the file&apos;s text past the {limit} characters allowed</source>
        <translation>leva o texto do arquivo além dos {limit} caracteres permitidos</translation>
    </message>
    <message>
        <source>is not a list of text labels</source>
        <translation>não é uma lista de rótulos de texto</translation>
    </message>
    <message>
        <source>holds lists of text of different lengths ({lengths}): one label per position of each batch element</source>
        <translation>contém listas de texto de comprimentos diferentes ({lengths}): espera-se um rótulo por posição de cada elemento do lote</translation>
    </message>
    <message>
        <source>mixes text with other values: labels must all be strings</source>
        <translation>mistura texto com outros valores: os rótulos devem ser todos textos</translation>
    </message>
    <message>
        <source>its only array</source>
        <translation>em seu único array</translation>
    </message>
    <message>
        <source>array &apos;{name}&apos;</source>
        <translation>no array &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>uses .npy format version {version}, which is not supported</source>
        <translation>usa a versão {version} do formato .npy, que não é suportada</translation>
    </message>
    <message>
        <source>claims a {length}-byte .npy header (at most {limit} bytes allowed)</source>
        <translation>declara um cabeçalho .npy de {length} bytes (no máximo {limit} bytes são aceitos)</translation>
    </message>
    <message>
        <source>has a damaged .npy header ({error})</source>
        <translation>tem um cabeçalho .npy danificado ({error})</translation>
    </message>
    <message>
        <source>is truncated: its header promises {promised} of data but only {found} are there</source>
        <translation>está truncado: seu cabeçalho promete {promised} de dados, mas só há {found}</translation>
    </message>
    <message>
        <source>is truncated: its header promises {promised} of data but only {found} follow</source>
        <translation>está truncado: seu cabeçalho promete {promised} de dados, mas só {found} vêm depois dele</translation>
    </message>
    <message>
        <source>is truncated or damaged: not a complete zip archive</source>
        <translation>está truncado ou danificado: não é um arquivo zip completo</translation>
    </message>
    <message>
        <source>has two members named &apos;{name}&apos;</source>
        <translation>tem dois membros chamados &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>is encrypted</source>
        <translation>está criptografado</translation>
    </message>
    <message>
        <source>is truncated: its header promises {promised} of data but the archive holds {found}</source>
        <translation>está truncado: seu cabeçalho promete {promised} de dados, mas o arquivo zip contém {found}</translation>
    </message>
    <message>
        <source>is damaged ({error})</source>
        <translation>está danificado ({error})</translation>
    </message>
    <message>
        <source>member &apos;{name}&apos; should be a single text string, not {dtype} of shape {shape}</source>
        <translation>o membro &apos;{name}&apos; deveria ser um único texto, não {dtype} de formato {shape}</translation>
    </message>
    <message>
        <source>member &apos;{name}&apos; is longer than the {limit} characters allowed</source>
        <translation>o membro &apos;{name}&apos; é mais longo que os {limit} caracteres permitidos</translation>
    </message>
    <message>
        <source>is too short to be a .safetensors file</source>
        <extracomment>The code numpy&apos;s dtype is written under (bfloat16 aside: numpy has none).</extracomment>
        <translation>é curto demais para ser um arquivo .safetensors</translation>
    </message>
    <message>
        <source>is not a valid .safetensors file: it claims a {length}-byte header (at most {limit} allowed)</source>
        <translation>não é um arquivo .safetensors válido: declara um cabeçalho de {length} bytes (no máximo {limit} permitidos)</translation>
    </message>
    <message>
        <source>is truncated or not .safetensors: its header length ({length} bytes) is larger than the file</source>
        <translation>está truncado ou não é .safetensors: o tamanho do seu cabeçalho ({length} bytes) é maior que o arquivo</translation>
    </message>
    <message>
        <source>has a damaged .safetensors header: the name &apos;{name}&apos; appears twice</source>
        <translation>tem um cabeçalho .safetensors danificado: o nome &apos;{name}&apos; aparece duas vezes</translation>
    </message>
    <message>
        <source>has a damaged .safetensors header (not valid JSON)</source>
        <translation>tem um cabeçalho .safetensors danificado (JSON inválido)</translation>
    </message>
    <message>
        <source>has a damaged .safetensors header (not a JSON object)</source>
        <translation>tem um cabeçalho .safetensors danificado (não é um objeto JSON)</translation>
    </message>
    <message>
        <source>has damaged .safetensors metadata (must map names to strings)</source>
        <translation>tem metadados .safetensors danificados (devem associar nomes a textos)</translation>
    </message>
    <message>
        <source>is truncated: array &apos;{name}&apos; lies at bytes {begin}-{end} of the data but only {size} bytes follow the header</source>
        <translation>está truncado: o array &apos;{name}&apos; fica nos bytes {begin}-{end} dos dados, mas só {size} bytes vêm depois do cabeçalho</translation>
    </message>
    <message>
        <source>has overlapping data for arrays &apos;{a}&apos; and &apos;{b}&apos;</source>
        <translation>tem dados sobrepostos para os arrays &apos;{a}&apos; e &apos;{b}&apos;</translation>
    </message>
    <message>
        <source>has a damaged header entry for array &apos;{name}&apos;</source>
        <translation>tem uma entrada de cabeçalho danificada para o array &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>has no dtype for array &apos;{name}&apos;</source>
        <translation>não tem dtype para o array &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>complex numbers</source>
        <translation>números complexos</translation>
    </message>
    <message>
        <source>dtype {dtype}</source>
        <translation>o dtype {dtype}</translation>
    </message>
    <message>
        <source>holds {kind}, which is not supported ({accepted})</source>
        <translation>contém {kind}, o que não é suportado ({accepted})</translation>
    </message>
    <message>
        <source>bool, integers, F16, BF16, F32, F64</source>
        <translation>bool, inteiros, F16, BF16, F32, F64</translation>
    </message>
    <message>
        <source>has an invalid shape for array &apos;{name}&apos;</source>
        <translation>tem um formato inválido para o array &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>has invalid data offsets for array &apos;{name}&apos;</source>
        <translation>tem deslocamentos de dados inválidos para o array &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>has a lying header: array &apos;{name}&apos; of shape {shape} needs {needed} bytes but its offsets span {span}</source>
        <translation>tem um cabeçalho mentiroso: o array &apos;{name}&apos; de formato {shape} precisa de {needed} bytes, mas seus deslocamentos cobrem {span}</translation>
    </message>
    <message>
        <source>is truncated inside array &apos;{name}&apos;</source>
        <translation>está truncado dentro do array &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>is metadata text longer than the {limit} characters allowed</source>
        <translation>é um texto de metadados mais longo que os {limit} caracteres permitidos</translation>
    </message>
    <message>
        <source>dtype {dtype} cannot be stored in .safetensors</source>
        <translation>o dtype {dtype} não pode ser guardado em .safetensors</translation>
    </message>
    <message>
        <source>is a legacy (non-zip) PyTorch file of {size}, more than the {limit} allowed</source>
        <translation>é um arquivo PyTorch legado (não zip) de {size}, mais que os {limit} permitidos</translation>
    </message>
    <message>
        <source>is truncated: member &apos;{name}&apos; extends beyond the end of the file</source>
        <translation>está truncado: o membro &apos;{name}&apos; vai além do fim do arquivo</translation>
    </message>
    <message>
        <source>has a {size} object description (data.pkl), more than the {limit} allowed</source>
        <translation>tem uma descrição de objetos (data.pkl) de {size}, mais que os {limit} permitidos</translation>
    </message>
    <message>
        <source>refused: its pickle would call {name}, which could run code (only tensors and plain containers are loaded)</source>
        <translation>recusado: seu pickle chamaria {name}, o que poderia executar código (só tensores e contêineres simples são carregados)</translation>
    </message>
    <message>
        <source>is truncated or damaged</source>
        <translation>está truncado ou danificado</translation>
    </message>
    <message>
        <source>its pickle uses the {opcode} opcode, which attnviz does not read</source>
        <translation>seu pickle usa o opcode {opcode}, que o attnviz não lê</translation>
    </message>
    <message>
        <source>its pickle describes more than {limit} objects</source>
        <translation>seu pickle descreve mais de {limit} objetos</translation>
    </message>
    <message>
        <source>its pickle holds a {n}-byte number (at most {limit} bytes are read)</source>
        <translation>seu pickle contém um número de {n} bytes (no máximo {limit} bytes são lidos)</translation>
    </message>
    <message>
        <source>its pickle uses a {type} as a dictionary key (only text and whole numbers are read)</source>
        <translation>seu pickle usa um {type} como chave de dicionário (só texto e números inteiros são lidos)</translation>
    </message>
    <message>
        <source>is not a PyTorch file that can be loaded safely ({error})</source>
        <translation>não é um arquivo PyTorch que possa ser carregado com segurança ({error})</translation>
    </message>
    <message>
        <source>is truncated or damaged: storage &apos;{key}&apos; is missing</source>
        <translation>está truncado ou danificado: falta o armazenamento &apos;{key}&apos;</translation>
    </message>
    <message>
        <source>is truncated or damaged: storage &apos;{key}&apos; declares {declared} bytes but its record holds {found} bytes</source>
        <translation>está truncado ou danificado: o armazenamento &apos;{key}&apos; declara {declared} bytes, mas seu registro contém {found} bytes</translation>
    </message>
    <message>
        <source>has an object description larger than the {limit} allowed</source>
        <translation>tem uma descrição de objetos maior que os {limit} permitidos</translation>
    </message>
    <message>
        <source>is damaged: storage &apos;{key}&apos; declares {declared} elements but its record says {found}</source>
        <translation>está danificado: o armazenamento &apos;{key}&apos; declara {declared} elementos, mas seu registro diz {found}</translation>
    </message>
    <message>
        <source>is truncated or damaged: storage &apos;{key}&apos; declares {declared} bytes but only {found} bytes remain in the file</source>
        <translation>está truncado ou danificado: o armazenamento &apos;{key}&apos; declara {declared} bytes, mas só restam {found} bytes no arquivo</translation>
    </message>
    <message>
        <source>is truncated: storage &apos;{key}&apos; ends early</source>
        <translation>está truncado: o armazenamento &apos;{key}&apos; termina antes do fim</translation>
    </message>
    <message>
        <source>holds a Python {type}, not tensors</source>
        <translation>contém um {type} do Python, não tensores</translation>
    </message>
    <message>
        <source>has two tensors that would both be named &apos;{name}&apos;</source>
        <translation>tem dois tensores que se chamariam ambos &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>holds no tensors</source>
        <translation>não contém tensores</translation>
    </message>
    <message>
        <source>nested too deeply</source>
        <translation>aninhado fundo demais</translation>
    </message>
    <message>
        <source>{type}, not a tensor</source>
        <translation>{type}, não um tensor</translation>
    </message>
    <message>
        <source>{name} ({why})</source>
        <translation>{name} ({why})</translation>
    </message>
    <message>
        <source>reaches past the end of its storage (it needs {needed} bytes, the storage holds {held})</source>
        <translation>vai além do fim do seu armazenamento (precisa de {needed} bytes, o armazenamento tem {held})</translation>
    </message>
    <message>
        <source>is a view spanning {span} of its storage, more than the {limit} allowed</source>
        <translation>é uma vista que abrange {span} do seu armazenamento, mais que os {limit} permitidos</translation>
    </message>
    <message>
        <source>is a {layout} tensor; only dense tensors are supported</source>
        <translation>é um tensor {layout}; só tensores densos são suportados</translation>
    </message>
    <message>
        <source>is on device &apos;{device}&apos; and holds no loadable data</source>
        <translation>está no dispositivo &apos;{device}&apos; e não contém dados carregáveis</translation>
    </message>
    <message>
        <source>is a kind of tensor attnviz does not read ({kind})</source>
        <translation>é um tipo de tensor que o attnviz não lê ({kind})</translation>
    </message>
    <message>
        <source>is damaged: storage &apos;{key}&apos; is described twice, differently</source>
        <translation>está danificado: o armazenamento &apos;{key}&apos; é descrito duas vezes, de formas diferentes</translation>
    </message>
    <message>
        <source>is quantized ({dtype}); only plain tensors are supported</source>
        <translation>é quantizado ({dtype}); só tensores simples são suportados</translation>
    </message>
    <message>
        <source>holds complex numbers ({dtype}); attention tensors must be real</source>
        <translation>contém números complexos ({dtype}); os tensores de atenção devem ser reais</translation>
    </message>
    <message>
        <source>has dtype {dtype}, which is not supported</source>
        <translation>tem o dtype {dtype}, que não é suportado</translation>
    </message>
    <message>
        <source>cannot be read ({error})</source>
        <translation>não pode ser lido ({error})</translation>
    </message>
    <message>
        <source>is too large to load into memory</source>
        <translation>é grande demais para carregar na memória</translation>
    </message>
    <message>
        <source>cannot be written ({error})</source>
        <translation>não pode ser gravado ({error})</translation>
    </message>
    <message>
        <source>select_head needs a 4-D (batch, heads, n, d) array, got {ndim}-D of shape {shape}</source>
        <extracomment>The book&apos;s roles (and ``mask``, read as ``attn_mask``: see ``attnviz.io.model_files``). What a real model&apos;s file adds: masks under the argument they are passed through (which says what their values mean), the causal flag and its alignment, SDPA&apos;s scale, and the tokens. The roles that hold a mask, each read as the argument of that name reads it. Roles whose value is text (token labels) rather than numbers.</extracomment>
        <translation>select_head exige um array 4-D (lote, cabeças, n, d), veio um {ndim}-D de formato {shape}</translation>
    </message>
    <message>
        <source>head and head_axis must be integers, not booleans</source>
        <translation>head e head_axis devem ser inteiros, não booleanos</translation>
    </message>
    <message>
        <source>head and head_axis must be integers, got {head} and {axis}</source>
        <translation>head e head_axis devem ser inteiros, vieram {head} e {axis}</translation>
    </message>
    <message>
        <source>head_axis {axis} is out of range for a 4-D array</source>
        <translation>head_axis {axis} está fora do intervalo para um array 4-D</translation>
    </message>
    <message>
        <source>none</source>
        <translation>nenhuma</translation>
    </message>
    <message>
        <source>head {head} is out of range: the array has {count} heads on axis {axis} (valid: {valid})</source>
        <translation>a cabeça {head} está fora do intervalo: o array tem {count} cabeças no eixo {axis} (válidas: {valid})</translation>
    </message>
    <message>
        <source>cannot store an array named {name}</source>
        <translation>não é possível guardar um array chamado {name}</translation>
    </message>
    <message>
        <source>settings must be a dict, not {type}</source>
        <translation>as configurações devem ser um dict, não {type}</translation>
    </message>
    <message>
        <source>{where} is {value}, which JSON cannot store</source>
        <translation>{where} é {value}, que o JSON não consegue guardar</translation>
    </message>
    <message>
        <source>{where} has the key {key}; JSON keys must be strings</source>
        <translation>{where} tem a chave {key}; as chaves do JSON devem ser textos</translation>
    </message>
    <message>
        <source>{where} is a {type}, which JSON cannot store</source>
        <translation>{where} é um {type}, que o JSON não consegue guardar</translation>
    </message>
    <message>
        <source>is not an attnviz session (no &apos;{member}&apos; member)</source>
        <translation>não é uma sessão do attnviz (falta o membro &apos;{member}&apos;)</translation>
    </message>
    <message>
        <source>cannot be written: two calls are named &apos;{name}&apos; (call names must be unique)</source>
        <extracomment>The version a file is written as when it holds nothing of version 3 (an ALiBi term, a call&apos;s unhonoured block sparsity): readable by version-2 readers. The header holds names, scalars and tokens: a few kB per call, a few MB with long token lists (64 sequences of 4,096 tokens take about 4 MB). Where the data starts and every array&apos;s offset: a multiple of this (cache lines, any dtype). Arrays are queries, keys, values, outputs, weights (4-D) and masks (at most 4-D). The arrays a call may hold, in the order they are written. A call&apos;s score-term arrays are named &quot;term_0&quot;, &quot;term_1&quot;... after their place in its &quot;terms&quot;. Version 2 adds these to a call and to the header. Version 3 adds the positions a call&apos;s queries were given (its &quot;positions&quot; array), and from what. What a call&apos;s positions were read from (``attnviz.capture.recorded_positions``). Keys of a call&apos;s &quot;path&quot; that a file may leave out (written only where they say something). The most query heads a path&apos;s &quot;value_heads&quot; may list (far above any model&apos;s).</extracomment>
        <translation>não pode ser gravado: duas chamadas têm o nome &apos;{name}&apos; (os nomes das chamadas devem ser únicos)</translation>
    </message>
    <message>
        <source>cannot be written: {problem}</source>
        <translation>não pode ser gravado: {problem}</translation>
    </message>
    <message>
        <source>cannot be written: its header would be {size} bytes, more than the {limit} allowed (too many tokens or calls)</source>
        <translation>não pode ser gravado: seu cabeçalho teria {size} bytes, mais que os {limit} permitidos (tokens ou chamadas demais)</translation>
    </message>
    <message>
        <source>does not exist</source>
        <translation>não existe</translation>
    </message>
    <message>
        <source>is a directory, not a capture file</source>
        <translation>é uma pasta, não um arquivo de captura</translation>
    </message>
    <message>
        <source>is not an attnviz capture (it is a zip archive: an attnviz session or a NumPy .npz?)</source>
        <translation>não é uma captura do attnviz (é um arquivo zip: uma sessão do attnviz ou um .npz do NumPy?)</translation>
    </message>
    <message>
        <source>is not an attnviz capture (its first bytes do not match)</source>
        <translation>não é uma captura do attnviz (seus primeiros bytes não conferem)</translation>
    </message>
    <message>
        <source>is truncated: it ends before its header length</source>
        <translation>está truncado: termina antes do campo com o tamanho do cabeçalho</translation>
    </message>
    <message>
        <source>is not a valid capture: it claims a {length}-byte header (at most {limit} allowed)</source>
        <translation>não é uma captura válida: declara um cabeçalho de {length} bytes (no máximo {limit} permitidos)</translation>
    </message>
    <message>
        <source>is truncated: its header length ({length} bytes) is larger than the file</source>
        <translation>está truncado: o tamanho do seu cabeçalho ({length} bytes) é maior que o arquivo</translation>
    </message>
    <message>
        <source>capture</source>
        <translation>captura</translation>
    </message>
    <message>
        <source>capture header</source>
        <translation>cabeçalho de captura</translation>
    </message>
    <message>
        <source>the header</source>
        <translation>no cabeçalho</translation>
    </message>
    <message>
        <source>has an unknown source {value} (one of {known})</source>
        <translation>tem uma origem desconhecida {value} (esperava-se uma destas: {known})</translation>
    </message>
    <message>
        <source>has an unknown entry &apos;{key}&apos; in {where}</source>
        <translation>tem uma entrada desconhecida &apos;{key}&apos; {where}</translation>
    </message>
    <message>
        <source>has no calls, or a damaged call list</source>
        <translation>não tem chamadas, ou tem uma lista de chamadas danificada</translation>
    </message>
    <message>
        <source>has two calls named &apos;{name}&apos;</source>
        <translation>tem duas chamadas com o nome &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>has a damaged entry for {where}</source>
        <extracomment>(offset, end) -&gt; (dtype code, shape, where): the arrays seen, one per stored range.</extracomment>
        <translation>tem uma entrada danificada para {where}</translation>
    </message>
    <message>
        <source>has an unsupported dtype {dtype} for {where}</source>
        <translation>tem um dtype {dtype} não suportado para {where}</translation>
    </message>
    <message>
        <source>has an invalid shape for {where} (1 to {most} dimensions, each at least 1)</source>
        <translation>tem um formato inválido para {where} (de 1 a {most} dimensões, cada uma de pelo menos 1)</translation>
    </message>
    <message>
        <source>has an invalid offset for {where} (a multiple of {alignment} is needed)</source>
        <translation>tem um deslocamento inválido para {where} (é preciso um múltiplo de {alignment})</translation>
    </message>
    <message>
        <source>is truncated or lies: {where} needs bytes {begin}-{end} of the data, but only {size} bytes follow the header</source>
        <translation>está truncado ou mente: {where} precisa dos bytes {begin}-{end} dos dados, mas só {size} bytes vêm depois do cabeçalho</translation>
    </message>
    <message>
        <source>has overlapping data for {a} and {b}</source>
        <translation>tem dados sobrepostos para {a} e {b}</translation>
    </message>
    <message>
        <source>call {index}</source>
        <translation>na chamada {index}</translation>
    </message>
    <message>
        <source>null or a dtype attnviz knows</source>
        <translation>null ou um dtype que o attnviz conhece</translation>
    </message>
    <message>
        <source>has sinks of shape {shape} in call &apos;{name}&apos;: floating-point numbers, one per head {heads} or one per query of each head {per_query}</source>
        <translation>tem sorvedouros de forma {shape} na chamada &apos;{name}&apos;: números de ponto flutuante, um por cabeça {heads} ou um por consulta de cada cabeça {per_query}</translation>
    </message>
    <message>
        <source>has no array list for call &apos;{name}&apos;</source>
        <translation>não tem lista de arrays para a chamada &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>has no array &apos;{array}&apos; for a score term of call &apos;{name}&apos;</source>
        <translation>não tem o array &apos;{array}&apos; para um termo de escore da chamada &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>has an unknown array &apos;{array}&apos; in call &apos;{name}&apos;</source>
        <translation>tem um array desconhecido &apos;{array}&apos; na chamada &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>array &apos;{array}&apos; of call &apos;{name}&apos;</source>
        <translation>o array &apos;{array}&apos; da chamada &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>has invalid positions in call &apos;{name}&apos;</source>
        <translation>tem posições inválidas na chamada &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>has an invalid &apos;terms&apos; in call &apos;{name}&apos;</source>
        <translation>tem &apos;terms&apos; inválido na chamada &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>has an invalid &apos;path&apos; in call &apos;{name}&apos;</source>
        <translation>tem &apos;path&apos; inválido na chamada &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>has an invalid &apos;tokens&apos; in call &apos;{name}&apos;</source>
        <translation>tem &apos;tokens&apos; inválido na chamada &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>has damaged token_sets (a list of token tables is needed)</source>
        <translation>tem token_sets danificado (é necessária uma lista de tabelas de tokens)</translation>
    </message>
    <message>
        <source>names token table {index}, which it does not have</source>
        <translation>cita a tabela de tokens {index}, que ele não tem</translation>
    </message>
    <message>
        <source>has an invalid &apos;shard&apos; (rank, world_size, sharding)</source>
        <translation>tem &apos;shard&apos; inválido (rank, world_size, sharding)</translation>
    </message>
    <message>
        <source>claims a world of more than {most} ranks</source>
        <translation>declara um mundo de mais de {most} ranks</translation>
    </message>
    <message>
        <source>has ALiBi slopes of shape {shape} in call &apos;{name}&apos;: one finite number per head ({heads})</source>
        <translation>tem inclinações ALiBi de forma {shape} na chamada &apos;{name}&apos;: um número finito por cabeça ({heads})</translation>
    </message>
    <message>
        <source>has a score term &apos;{term}&apos; of shape {shape} in call &apos;{name}&apos;, which its attention of shape {target} cannot take</source>
        <translation>tem um termo de escore &apos;{term}&apos; de forma {shape} na chamada &apos;{name}&apos;, que sua atenção de forma {target} não aceita</translation>
    </message>
    <message>
        <source>has positions of shape {shape} in call &apos;{name}&apos;: one finite number per query ({queries}), for its batch ({batch}) or all of it</source>
        <translation>tem posições de formato {shape} na chamada &apos;{name}&apos;: um número finito por consulta ({queries}), para cada elemento do lote ({batch}) ou para o lote todo</translation>
    </message>
    <message>
        <source>has a mask {role} of shape {shape} and dtype {dtype} in call &apos;{name}&apos;, which its attention of shape {target} cannot take</source>
        <translation>tem uma máscara {role} de formato {shape} e dtype {dtype} na chamada &apos;{name}&apos;, que sua atenção de formato {target} não aceita</translation>
    </message>
    <message>
        <source>has damaged {key} (a list of equally long lists of strings is needed)</source>
        <translation>tem {key} danificado (é preciso uma lista de listas de textos, todas do mesmo comprimento)</translation>
    </message>
    <message>
        <source>is a directory, not a session file</source>
        <translation>é uma pasta, não um arquivo de sessão</translation>
    </message>
    <message>
        <source>is not a regular file</source>
        <translation>não é um arquivo comum</translation>
    </message>
    <message>
        <source>cannot be written: its description would be {size} characters, more than the {limit} a session may hold (too many tokens)</source>
        <extracomment>What only a version 4 reader knows: a session without them is written as version 3. The run&apos;s description (its calls&apos; names, scales and causal flags, the head shown, tokens, what it is compared with), as JSON; the app always writes one (format version 3, 4 with ``VERSION_4_KEYS``). Empty: version 1.</extracomment>
        <translation>não pode ser gravado: sua descrição teria {size} caracteres, mais que os {limit} que uma sessão pode conter (tokens demais)</translation>
    </message>
    <message>
        <source>is empty</source>
        <translation>está vazio</translation>
    </message>
    <message>
        <source>session</source>
        <translation>sessão</translation>
    </message>
    <message>
        <source>&apos;{member}&apos; member</source>
        <translation>membro &apos;{member}&apos;</translation>
    </message>
    <message>
        <source>has damaged settings (not a JSON object)</source>
        <translation>tem configurações danificadas (não são um objeto JSON)</translation>
    </message>
    <message>
        <source>has a damaged array list (not a list of names)</source>
        <translation>tem uma lista de arrays danificada (não é uma lista de nomes)</translation>
    </message>
    <message>
        <source>lists the same array twice</source>
        <translation>lista o mesmo array duas vezes</translation>
    </message>
    <message>
        <source>has a damaged model description (not a JSON object)</source>
        <translation>tem uma descrição de modelo danificada (não é um objeto JSON)</translation>
    </message>
    <message>
        <source>holds an unexpected member &apos;{name}&apos;</source>
        <translation>contém um membro inesperado &apos;{name}&apos;</translation>
    </message>
    <message>
        <source>is missing array &apos;{name}&apos; listed in its manifest</source>
        <translation>não tem o array &apos;{name}&apos; listado em seu manifesto</translation>
    </message>
    <message>
        <source>holds array &apos;{name}&apos; that its manifest does not list</source>
        <translation>contém o array &apos;{name}&apos;, que seu manifesto não lista</translation>
    </message>
    <message>
        <source>is no longer this window&apos;s autosave</source>
        <translation>não é mais o salvamento automático desta janela</translation>
    </message>
    <message>
        <source>cannot hold a lock on an autosave file here</source>
        <translation>não é possível manter uma trava em um arquivo de salvamento automático aqui</translation>
    </message>
    <message>
        <source>cannot create {folder} ({error})</source>
        <translation>não é possível criar {folder} ({error})</translation>
    </message>
    <message>
        <source>valid_lens</source>
        <translation>comprimentos válidos</translation>
    </message>
    <message>
        <source>mask</source>
        <translation>máscara</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; is not a role ({roles})</source>
        <translation>&apos;{name}&apos; não é um papel ({roles})</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({role}) holds text (dtype {dtype}), not numbers</source>
        <translation>&apos;{name}&apos; ({role}) contém texto (dtype {dtype}), não números</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({role}) holds numbers, not text labels</source>
        <translation>&apos;{name}&apos; ({role}) contém números, não rótulos de texto</translation>
    </message>
    <message>
        <source>a model&apos;s file needs queries, keys and values: no array was chosen for {role}</source>
        <translation>o arquivo de um modelo precisa de consultas, chaves e valores: nenhum array foi escolhido para {role}</translation>
    </message>
    <message>
        <source>queries {q}, keys {k} and values {v} must all be (batch, heads, n, d) or all (layers, batch, heads, n, d)</source>
        <translation>consultas {q}, chaves {k} e valores {v} devem ser todos (lote, cabeças, n, d) ou todos (camadas, lote, cabeças, n, d)</translation>
    </message>
    <message>
        <source>queries {q}, keys {k} and values {v} disagree on the number of layers (axis 0)</source>
        <translation>consultas {q}, chaves {k} e valores {v} não batem no número de camadas (eixo 0)</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; and &apos;{other}&apos; would both be the {argument}: leave one out</source>
        <translation>&apos;{name}&apos; e &apos;{other}&apos; seriam ambos o argumento {argument}: deixe um de fora</translation>
    </message>
    <message>
        <source>(batch, queries, keys)</source>
        <translation>(lote, consultas, chaves)</translation>
    </message>
    <message>
        <source>(batch, heads, queries, keys)</source>
        <translation>(lote, cabeças, consultas, chaves)</translation>
    </message>
    <message>
        <source>SDPA&apos;s attn_mask is bool (True = attend) or float (added to the scores)</source>
        <translation>a attn_mask do SDPA é bool (True = atender) ou float (somada às pontuações)</translation>
    </message>
    <message>
        <source>a key_padding_mask is bool (True = ignore) or float (added to the scores)</source>
        <translation>uma key_padding_mask é bool (True = ignorar) ou float (somada às pontuações)</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({argument}) holds whole numbers ({dtype}): {why}; a 0/1 mask with 1 = attend is named attention_mask</source>
        <translation>&apos;{name}&apos; ({argument}) contém números inteiros ({dtype}): {why}; uma máscara 0/1 com 1 = atender se chama attention_mask</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; (attention_mask) must hold 0 and 1 (1 = attend), found {value}; an additive mask (0 and large negative numbers) is named attn_mask</source>
        <translation>&apos;{name}&apos; (attention_mask) deve conter 0 e 1 (1 = atender), foi encontrado {value}; uma máscara aditiva (0 e números negativos grandes) se chama attn_mask</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({argument}) has shape {shape}: its first axis is {found} layers, the tensors have {layers}</source>
        <translation>&apos;{name}&apos; ({argument}) tem formato {shape}: seu primeiro eixo tem {found} camadas, os tensores têm {layers}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({argument}) has shape {shape}; a padding mask is (batch, keys) = {needed}</source>
        <translation>&apos;{name}&apos; ({argument}) tem formato {shape}; uma máscara de padding é (lote, chaves) = {needed}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({argument}) has shape {shape}, which does not broadcast to {target} {axes}; expected a shape such as {examples}</source>
        <translation>&apos;{name}&apos; ({argument}) tem formato {shape}, que não se propaga (broadcast) para {target} {axes}; esperava-se um formato como {examples}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; (causal) is {value}; expected top_left, bottom_right, true or false</source>
        <translation>&apos;{name}&apos; (causal) é {value}; esperava-se top_left, bottom_right, true ou false</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; (is_causal) and &apos;{other}&apos; (causal) disagree</source>
        <translation>&apos;{name}&apos; (is_causal) e &apos;{other}&apos; (causal) não concordam</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; (is_causal) is {value}; expected true or false (one value)</source>
        <translation>&apos;{name}&apos; (is_causal) é {value}; esperava-se true ou false (um único valor)</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; (scale) is {value}; expected one finite number (SDPA&apos;s scale)</source>
        <translation>&apos;{name}&apos; (scale) é {value}; esperava-se um único número finito (o scale do SDPA)</translation>
    </message>
    <message>
        <source>an array of shape {shape}</source>
        <translation>um array de formato {shape}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; (tokens) has shape {shape}: {n} labels, but the queries are {n_q} and the keys {n_k}; give ({n_k},) or ({batch}, {n_k})</source>
        <translation>&apos;{name}&apos; (tokens) tem formato {shape}: {n} rótulos, mas as consultas são {n_q} e as chaves {n_k}; use ({n_k},) ou ({batch}, {n_k})</translation>
    </message>
    <message>
        <source>queries</source>
        <translation>consultas</translation>
    </message>
    <message>
        <source>keys</source>
        <translation>chaves</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; has shape {shape}, but there are {n} {what}: give ({n},) or ({batch}, {n})</source>
        <translation>&apos;{name}&apos; tem formato {shape}, mas há {n} {what}: use ({n},) ou ({batch}, {n})</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({role}) has shape {shape}: {rows} rows of labels for a batch of {batch}</source>
        <translation>&apos;{name}&apos; ({role}) tem formato {shape}: {rows} linhas de rótulos para um lote de {batch}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({role}) is one text; tokens are a list of labels, (L,) or (batch, L)</source>
        <translation>&apos;{name}&apos; ({role}) é um único texto; os tokens são uma lista de rótulos, (L,) ou (lote, L)</translation>
    </message>
    <message>
        <source>holds an array &apos;mask&apos;, which sessions do not have: masks are kept as masks/attn_mask, masks/key_padding_mask or masks/attention_mask</source>
        <extracomment>Session array names of the parameters: ``params/W_q`` holds ``state.params[&quot;W_q&quot;]``. The run&apos;s arrays: ``run/&lt;call&gt;/&lt;name&gt;``; a version 1 or 2 session&apos;s book masks: ``masks/&lt;argument&gt;``. Document ids of packed sequences (B, K): ``State.documents``.</extracomment>
        <translation>contém um array &apos;mask&apos;, que as sessões não têm: as máscaras são guardadas como masks/attn_mask, masks/key_padding_mask ou masks/attention_mask</translation>
    </message>
    <message>
        <source>has no &apos;{name}&apos; array; a session needs queries, keys and values</source>
        <translation>não tem o array &apos;{name}&apos;; uma sessão precisa de consultas, chaves e valores</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; has shape {shape} but queries {queries} need {needed}</source>
        <translation>&apos;{name}&apos; tem formato {shape}, mas as consultas {queries} precisam de {needed}</translation>
    </message>
    <message>
        <source>parameter &apos;{name}&apos; must hold real numbers, not {dtype}</source>
        <translation>o parâmetro &apos;{name}&apos; deve conter números reais, não {dtype}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; has shape {shape} but keys {keys} need {needed}</source>
        <translation>&apos;{name}&apos; tem formato {shape}, mas as chaves {keys} precisam de {needed}</translation>
    </message>
    <message>
        <source>has a damaged model description: {error}</source>
        <translation>tem uma descrição de modelo danificada: {error}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; must be {batch} lists of strings of one length</source>
        <translation>&apos;{name}&apos; deve ser {batch} listas de textos, todas do mesmo comprimento</translation>
    </message>
    <message>
        <source>&apos;calls&apos; must be a non-empty list</source>
        <translation>&apos;calls&apos; deve ser uma lista não vazia</translation>
    </message>
    <message>
        <source>&apos;causal_alignment&apos; is {value}; expected one of {choices}</source>
        <translation>&apos;causal_alignment&apos; é {value}; esperava-se um destes: {choices}</translation>
    </message>
    <message>
        <source>the head shown, {head} of call {layer}, is not in the model</source>
        <translation>a cabeça mostrada, {head} da chamada {layer}, não está no modelo</translation>
    </message>
    <message>
        <source>&apos;ablated_heads&apos; is {value}; expected a list of [call, head] pairs</source>
        <translation>&apos;ablated_heads&apos; é {value}; esperava-se uma lista de pares [chamada, cabeça]</translation>
    </message>
    <message>
        <source>&apos;ablated_heads&apos; holds {value}; expected a [call, head] pair</source>
        <translation>&apos;ablated_heads&apos; contém {value}; esperava-se um par [chamada, cabeça]</translation>
    </message>
    <message>
        <source>the ablated head {head} of call {layer} is not in the model</source>
        <translation>a cabeça removida {head} da chamada {layer} não está no modelo</translation>
    </message>
    <message>
        <source>&apos;compared_with&apos; is {value}; expected the path of a capture file</source>
        <translation>&apos;compared_with&apos; é {value}; esperava-se o caminho de um arquivo de captura</translation>
    </message>
    <message>
        <source>call {index} is {value}, not an object</source>
        <translation>a chamada {index} é {value}, não um objeto</translation>
    </message>
    <message>
        <source>call {index}: &apos;{key}&apos; is {value}; expected {expected}</source>
        <translation>chamada {index}: &apos;{key}&apos; é {value}; esperava-se {expected}</translation>
    </message>
    <message>
        <source>a non-empty string</source>
        <translation>um texto não vazio</translation>
    </message>
    <message>
        <source>true or false</source>
        <translation>true ou false</translation>
    </message>
    <message>
        <source>null or a number &gt; 0</source>
        <translation>null ou um número &gt; 0</translation>
    </message>
    <message>
        <source>null, &quot;inf&quot; or a number &gt;= 0</source>
        <translation>null, &quot;inf&quot; ou um número &gt;= 0</translation>
    </message>
    <message>
        <source>a string</source>
        <translation>um texto</translation>
    </message>
    <message>
        <source>&apos;{key}&apos; is {value}; expected a whole number</source>
        <translation>&apos;{key}&apos; é {value}; esperava-se um número inteiro</translation>
    </message>
    <message>
        <source>setting &apos;{name}&apos; is {value}; expected {expected}</source>
        <extracomment>The panels settings are shown in (a declaration&apos;s ``group``; &quot;&quot;: in none). The largest whole number a spin box holds (a C int): the seeds&apos; and long-context masks&apos; top. Additive attention&apos;s hidden size h: W_q and W_k are h x d, so a typo must not ask for more.</extracomment>
        <translation>a configuração &apos;{name}&apos; é {value}; esperava-se {expected}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; is not a setting</source>
        <translation>&apos;{name}&apos; não é uma configuração</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; must hold real numbers, not {dtype}</source>
        <translation>&apos;{name}&apos; deve conter números reais, não {dtype}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; must be 3-D (batch, n, d), got shape {shape}</source>
        <translation>&apos;{name}&apos; deve ser 3-D (lote, n, d), veio o formato {shape}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; must hold whole numbers (valid lengths), found {value}</source>
        <translation>&apos;{name}&apos; deve conter números inteiros (comprimentos válidos), foi encontrado {value}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; must hold whole numbers (valid lengths), not {dtype}</source>
        <translation>&apos;{name}&apos; deve conter números inteiros (comprimentos válidos), não {dtype}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; has lengths too large for int64</source>
        <translation>&apos;{name}&apos; tem comprimentos grandes demais para int64</translation>
    </message>
    <message>
        <source>batch sizes disagree: queries {q}, keys {k}, values {v}</source>
        <translation>os tamanhos de lote não batem: consultas {q}, chaves {k}, valores {v}</translation>
    </message>
    <message>
        <source>keys {k} and values {v} must have the same number of entries (axis 1)</source>
        <translation>chaves {k} e valores {v} devem ter o mesmo número de entradas (eixo 1)</translation>
    </message>
    <message>
        <source>batch size</source>
        <translation>tamanho do lote</translation>
    </message>
    <message>
        <source>number of queries</source>
        <translation>número de consultas</translation>
    </message>
    <message>
        <source>number of keys</source>
        <translation>número de chaves</translation>
    </message>
    <message>
        <source>the {what} is 0 (queries {q}, keys {k}, values {v}); attnviz needs at least 1</source>
        <translation>o {what} é 0 (consultas {q}, chaves {k}, valores {v}); o attnviz precisa de ao menos 1</translation>
    </message>
    <message>
        <source>the {what} is {size}, more than the {limit} attnviz can edit</source>
        <translation>o {what} é {size}, mais que os {limit} que o attnviz consegue editar</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({role}) comes with queries, keys and values from the same file, and {missing} were not chosen</source>
        <translation>&apos;{name}&apos; ({role}) vem com consultas, chaves e valores do mesmo arquivo, e não foram escolhidos: {missing}</translation>
    </message>
    <message>
        <source>layer {layer} is out of range: the tensors have no layers</source>
        <translation>a camada {layer} está fora do intervalo: os tensores não têm camadas</translation>
    </message>
    <message>
        <source>layer {index} is out of range: the file has {n} layer (0)</source>
        <translation>a camada {index} está fora do intervalo: o arquivo tem {n} camada (0)</translation>
    </message>
    <message>
        <source>layer {index} is out of range: the file has {n} layers (0 to {last})</source>
        <translation>a camada {index} está fora do intervalo: o arquivo tem {n} camadas (0 a {last})</translation>
    </message>
    <message>
        <source>head {index} is out of range: layer {layer} has {n} head (0)</source>
        <translation>a cabeça {index} está fora do intervalo: a camada {layer} tem {n} cabeça (0)</translation>
    </message>
    <message>
        <source>head {index} is out of range: layer {layer} has {n} heads (0 to {last})</source>
        <translation>a cabeça {index} está fora do intervalo: a camada {layer} tem {n} cabeças (0 a {last})</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({role}) has shape {shape} (layers, batch, heads, n, d): a model&apos;s layers load with queries, keys and values from the file together</source>
        <translation>&apos;{name}&apos; ({role}) tem formato {shape} (camadas, lote, cabeças, n, d): as camadas de um modelo são carregadas junto com as consultas, chaves e valores do arquivo</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({role}) has shape {shape}; expected (n, d), (batch, n, d), (batch, heads, n, d) or (layers, batch, heads, n, d)</source>
        <translation>&apos;{name}&apos; ({role}) tem formato {shape}; esperava-se (n, d), (lote, n, d), (lote, cabeças, n, d) ou (camadas, lote, cabeças, n, d)</translation>
    </message>
    <message>
        <source>valid lengths &apos;{name}&apos; have shape {shape} but queries ({b}, {n_q}, d) need ({b},) or ({b}, {n_q})</source>
        <translation>os comprimentos válidos &apos;{name}&apos; têm formato {shape}, mas as consultas ({b}, {n_q}, d) precisam de ({b},) ou ({b}, {n_q})</translation>
    </message>
    <message>
        <source>{what} must be a whole number, got {value}</source>
        <translation>{what} deve ser um número inteiro, veio {value}</translation>
    </message>
    <message>
        <source>{what} must be 0 or more, got {value}</source>
        <translation>{what} deve ser 0 ou mais, veio {value}</translation>
    </message>
    <message>
        <source>has no array named &apos;{name}&apos; (for {role})</source>
        <translation>não tem array chamado &apos;{name}&apos; (para {role})</translation>
    </message>
    <message>
        <source>no array was chosen for queries, keys, values or valid lengths</source>
        <translation>nenhum array foi escolhido para consultas, chaves, valores ou comprimentos válidos</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({role}) must hold real numbers, not {dtype}</source>
        <translation>&apos;{name}&apos; ({role}) deve conter números reais, não {dtype}</translation>
    </message>
    <message>
        <source>{problem} ({roles} kept from the current inputs)</source>
        <translation>{problem} (das entradas atuais: {roles})</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; is a mask by its name, not valid lengths: choose it as {argument}</source>
        <translation>&apos;{name}&apos; é uma máscara pelo nome, não comprimentos válidos: escolha-o como {argument}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; (valid lengths) has shape {shape}; expected (batch,) or (batch, n_queries)</source>
        <translation>&apos;{name}&apos; (comprimentos válidos) tem formato {shape}; esperava-se (lote,) ou (lote, n_consultas)</translation>
    </message>
    <message>
        <source>valid lengths &apos;{name}&apos; have shape {shape}; expected (batch,) or (batch, n_queries)</source>
        <translation>os comprimentos válidos &apos;{name}&apos; têm formato {shape}; esperava-se (lote,) ou (lote, n_consultas)</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({role}) has shape {shape} (batch, heads, n, d): choose a head from 0 to {last}</source>
        <translation>&apos;{name}&apos; ({role}) tem formato {shape} (lote, cabeças, n, d): escolha uma cabeça de 0 a {last}</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({role}): {problem}</source>
        <translation>&apos;{name}&apos; ({role}): {problem}</translation>
    </message>
    <message>
        <source>holds no arrays</source>
        <translation>não contém arrays</translation>
    </message>
    <message>
        <source>cannot be accessed ({error})</source>
        <translation>não pode ser acessado ({error})</translation>
    </message>
    <message>
        <source>is a directory, not a tensor file</source>
        <translation>é uma pasta, não um arquivo de tensores</translation>
    </message>
    <message>
        <source>cannot be read: permission denied</source>
        <translation>não pode ser lido: permissão negada</translation>
    </message>
    <message>
        <source>is not a NumPy .npy file (its first bytes do not match), or is damaged</source>
        <translation>não é um arquivo NumPy .npy (seus primeiros bytes não conferem), ou está danificado</translation>
    </message>
    <message>
        <source>is not a NumPy .npz archive (its first bytes do not match), or is damaged</source>
        <translation>não é um arquivo NumPy .npz (seus primeiros bytes não conferem), ou está danificado</translation>
    </message>
    <message>
        <source>is not a PyTorch file (its first bytes do not match), or is damaged</source>
        <translation>não é um arquivo PyTorch (seus primeiros bytes não conferem), ou está danificado</translation>
    </message>
    <message>
        <source>is not a tensor file attnviz can read (.npy, .npz, .pt/.pth or .safetensors)</source>
        <translation>não é um arquivo de tensores que o attnviz saiba ler (.npy, .npz, .pt/.pth ou .safetensors)</translation>
    </message>
    <message>
        <source>not an .npy array</source>
        <translation>não é um array .npy</translation>
    </message>
    <message>
        <source>holds no arrays of numbers, only text ({names})</source>
        <translation>não contém arrays de números, só texto ({names})</translation>
    </message>
    <message>
        <source>has an unknown extension; use .npy, .npz, .pt, .pth or .safetensors</source>
        <translation>tem uma extensão desconhecida; use .npy, .npz, .pt, .pth ou .safetensors</translation>
    </message>
    <message>
        <source>a .npy file holds exactly one array, {n} given; use .npz</source>
        <translation>um arquivo .npy contém exatamente um array, mas foram dados {n}; use .npz</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; is reserved in .safetensors and cannot name an array</source>
        <translation>&apos;{name}&apos; é reservado em .safetensors e não pode nomear um array</translation>
    </message>
    <message>
        <source>cannot be written as CSV: the array {problem}</source>
        <translation>não pode ser gravado como CSV: o array {problem}</translation>
    </message>
    <message>
        <source>CSV export takes a 1-D, 2-D or 3-D array, got shape {shape}</source>
        <translation>a exportação CSV aceita um array 1-D, 2-D ou 3-D, veio o formato {shape}</translation>
    </message>
    <message>
        <source>has a damaged {part}: the name &apos;{name}&apos; appears twice in one object</source>
        <extracomment>The objects and lists a file&apos;s description may hold, counted before parsing: dense JSON (&quot;[[],[],...&quot; or &quot;{},{},...&quot;) makes some 20 to 25 bytes of Python objects per character, so this bounds what a hostile description makes the parser allocate. A capture header holds some 20 per call and one per sequence of tokens, a session&apos;s manifest fewer. JSON has no infinity: a call&apos;s infinite fidelity (NaN in the model&apos;s output where attnviz has a number, or the reverse) is written as this string, in sessions and capture files alike.</extracomment>
        <translation>tem um {part} danificado: o nome &apos;{name}&apos; aparece duas vezes em um objeto</translation>
    </message>
    <message>
        <source>has a damaged {part}: {value} is not a number JSON allows</source>
        <translation>tem um {part} danificado: {value} não é um número que o JSON permita</translation>
    </message>
    <message>
        <source>has a {part} with {count} JSON objects and lists (at most {limit} allowed)</source>
        <translation>tem um {part} com {count} objetos e listas JSON (no máximo {limit} permitidos)</translation>
    </message>
    <message>
        <source>has a damaged {part} (not valid JSON)</source>
        <translation>tem um {part} danificado (JSON inválido)</translation>
    </message>
    <message>
        <source>is not an attnviz {kind} (&apos;format&apos; is not &quot;{format}&quot;)</source>
        <translation>não é uma {kind} do attnviz (&apos;format&apos; não é &quot;{format}&quot;)</translation>
    </message>
    <message>
        <source>has an invalid {kind} format version: {version}</source>
        <translation>tem uma versão de formato de {kind} inválida: {version}</translation>
    </message>
    <message>
        <source>was written by a newer attnviz ({kind} format version {version}); this version reads version {known} only</source>
        <translation>foi gravado por um attnviz mais novo (versão {version} do formato de {kind}); esta versão só lê a versão {known}</translation>
    </message>
    <message>
        <source>the path cannot be used ({error})</source>
        <translation>o caminho não pode ser usado ({error})</translation>
    </message>
    <message>
        <source>it is {kind}, not a regular file: nothing was written</source>
        <translation>é {kind}, não um arquivo comum: nada foi gravado</translation>
    </message>
    <message>
        <source>it is {input}, an input of this command: nothing was written</source>
        <translation>é {input}, uma entrada deste comando: nada foi gravado</translation>
    </message>
    <message>
        <source>a FIFO (a named pipe)</source>
        <translation>um FIFO (um pipe nomeado)</translation>
    </message>
    <message>
        <source>a folder</source>
        <translation>uma pasta</translation>
    </message>
    <message>
        <source>a device</source>
        <translation>um dispositivo</translation>
    </message>
    <message>
        <source>a socket</source>
        <translation>um socket</translation>
    </message>
    <message>
        <source>a special file</source>
        <translation>um arquivo especial</translation>
    </message>
</context>
<context>
    <name>FileNotes</name>
    <message>
        <source>no &apos;{name}&apos; array: every key is valid</source>
        <translation>sem o array &apos;{name}&apos;: todas as chaves são válidas</translation>
    </message>
    <message>
        <source>ignored the unknown array &apos;{name}&apos;</source>
        <translation>o array desconhecido &apos;{name}&apos; foi ignorado</translation>
    </message>
    <message>
        <source>ignored the unknown setting &apos;{name}&apos;</source>
        <translation>a configuração desconhecida &apos;{name}&apos; foi ignorada</translation>
    </message>
    <message>
        <source>used the default for {names}</source>
        <translation>usado o padrão para {names}</translation>
    </message>
    <message>
        <source>the file brings no scoring settings: scaled dot-product scoring, as real models use</source>
        <extracomment>The one line that says a file&apos;s tensors are shown with a real model&apos;s scoring, not the toy&apos;s.</extracomment>
        <translation>o arquivo não traz configurações de pontuação: pontuação por produto escalar escalonado, como usam os modelos reais</translation>
    </message>
    <message>
        <source>the file has {n} layers: layer 0 is shown</source>
        <translation>o arquivo tem {n} camadas: a camada 0 é mostrada</translation>
    </message>
    <message>
        <source>the file has {n} heads: head 0 is shown</source>
        <translation>o arquivo tem {n} cabeças: a cabeça 0 é mostrada</translation>
    </message>
    <message>
        <source>no valid lengths in the file: every key is valid</source>
        <translation>sem comprimentos válidos no arquivo: todas as chaves são válidas</translation>
    </message>
    <message>
        <source>the current settings are kept: {scoring} scoring</source>
        <translation>as configurações atuais são mantidas: pontuação {scoring}</translation>
    </message>
    <message>
        <source>{scoring} scoring needs d_q = d_k (here {d_q} and {d_k}): choose additive, bilinear or another scoring</source>
        <translation>a pontuação {scoring} exige d_q = d_k (aqui {d_q} e {d_k}): escolha a aditiva, a bilinear ou outra pontuação</translation>
    </message>
    <message>
        <source>the file brings no scoring settings, and dot products need d_q = d_k (here {d_q} and {d_k}): additive scoring with seeded parameters, as in the book</source>
        <translation>o arquivo não traz configurações de pontuação, e produtos escalares exigem d_q = d_k (aqui {d_q} e {d_k}): pontuação aditiva com parâmetros de semente fixa, como no livro</translation>
    </message>
    <message>
        <source>valid lengths &apos;{name}&apos; are all 0 or 1: each query sees at most key 0; a 0/1 mask (1 = attend) is loaded as attention_mask</source>
        <translation>os comprimentos válidos &apos;{name}&apos; são todos 0 ou 1: cada consulta vê no máximo a chave 0; uma máscara 0/1 (1 = atender) se carrega como attention_mask</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; ({role}) was left out</source>
        <translation>&apos;{name}&apos; ({role}) foi deixado de fora</translation>
    </message>
    <message>
        <source>skipped {entries}</source>
        <translation>ignorados: {entries}</translation>
    </message>
    <message>
        <source>is_causal with fewer queries ({n_q}) than keys ({n_k}) is aligned top-left, as SDPA does: a KV-cache step is causal=&quot;bottom_right&quot;</source>
        <translation>is_causal com menos consultas ({n_q}) que chaves ({n_k}) é alinhado no canto superior esquerdo, como faz o SDPA: um passo com cache KV é causal=&quot;bottom_right&quot;</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; is read as SDPA&apos;s attn_mask: True = attend, floats added to the scores (a mask whose True means ignore is named key_padding_mask)</source>
        <translation>&apos;{name}&apos; é lido como a attn_mask do SDPA: True = atender, floats somados às pontuações (uma máscara em que True significa ignorar se chama key_padding_mask)</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; holds whole numbers: read as Hugging Face&apos;s attention_mask, 1 = attend</source>
        <translation>&apos;{name}&apos; contém números inteiros: lido como a attention_mask do Hugging Face, 1 = atender</translation>
    </message>
    <message>
        <source>the {axis} have no labels: &apos;{name}&apos; has {length}, and there are {n} {axis} (give {role})</source>
        <translation>as {axis} não têm rótulos: &apos;{name}&apos; tem {length}, e há {n} {axis} (indique {role})</translation>
    </message>
</context>
<context>
    <name>Formulas</name>
    <message>
        <source>with {d} = {n}, {root} = {value}</source>
        <extracomment>Background of the highlighted part (a warm yellow that keeps black text readable). Stages a formula part can be tagged with: the engine&apos;s stages plus the additive features.</extracomment>
        <translation>com {d} = {n}, {root} = {value}</translation>
    </message>
    <message>
        <source>learned &lt;b&gt;W&lt;/b&gt;&lt;sub&gt;&lt;i&gt;q&lt;/i&gt;&lt;/sub&gt; ∈ ℝ&lt;sup&gt;&lt;i&gt;h&lt;/i&gt;×&lt;i&gt;q&lt;/i&gt;&lt;/sup&gt;, &lt;b&gt;W&lt;/b&gt;&lt;sub&gt;&lt;i&gt;k&lt;/i&gt;&lt;/sub&gt; ∈ ℝ&lt;sup&gt;&lt;i&gt;h&lt;/i&gt;×&lt;i&gt;k&lt;/i&gt;&lt;/sup&gt;, &lt;b&gt;w&lt;/b&gt;&lt;sub&gt;&lt;i&gt;v&lt;/i&gt;&lt;/sub&gt; ∈ ℝ&lt;sup&gt;&lt;i&gt;h&lt;/i&gt;&lt;/sup&gt;</source>
        <translation>aprendíveis: &lt;b&gt;W&lt;/b&gt;&lt;sub&gt;&lt;i&gt;q&lt;/i&gt;&lt;/sub&gt; ∈ ℝ&lt;sup&gt;&lt;i&gt;h&lt;/i&gt;×&lt;i&gt;q&lt;/i&gt;&lt;/sup&gt;, &lt;b&gt;W&lt;/b&gt;&lt;sub&gt;&lt;i&gt;k&lt;/i&gt;&lt;/sub&gt; ∈ ℝ&lt;sup&gt;&lt;i&gt;h&lt;/i&gt;×&lt;i&gt;k&lt;/i&gt;&lt;/sup&gt;, &lt;b&gt;w&lt;/b&gt;&lt;sub&gt;&lt;i&gt;v&lt;/i&gt;&lt;/sub&gt; ∈ ℝ&lt;sup&gt;&lt;i&gt;h&lt;/i&gt;&lt;/sup&gt;</translation>
    </message>
    <message>
        <source>learned &lt;b&gt;W&lt;/b&gt; ∈ ℝ&lt;sup&gt;&lt;i&gt;q&lt;/i&gt;×&lt;i&gt;k&lt;/i&gt;&lt;/sup&gt;: queries and keys may differ in length</source>
        <translation>aprendível: &lt;b&gt;W&lt;/b&gt; ∈ ℝ&lt;sup&gt;&lt;i&gt;q&lt;/i&gt;×&lt;i&gt;k&lt;/i&gt;&lt;/sup&gt;; consultas e chaves podem ter comprimentos diferentes</translation>
    </message>
    <message>
        <source>the scaling keeps the variance of the scores near 1 for unit-variance inputs</source>
        <translation>a escala mantém a variância das pontuações perto de 1 para entradas de variância unitária</translation>
    </message>
    <message>
        <source>no scaling: the scores grow with &lt;i&gt;d&lt;/i&gt;</source>
        <translation>sem escala: as pontuações crescem com &lt;i&gt;d&lt;/i&gt;</translation>
    </message>
    <message>
        <source>the Nadaraya–Watson kernel the chapter starts from</source>
        <translation>o kernel de Nadaraya–Watson de que o capítulo parte</translation>
    </message>
    <message>
        <source>the query term is the same for every key, so the softmax cancels it</source>
        <translation>o termo da consulta é o mesmo para toda chave, então o softmax o cancela</translation>
    </message>
    <message>
        <source>if {m} = 1</source>
        <extracomment>HTML of a(q, k) for every scoring function, by name. A scoring function registered in the engine without an entry here fails ``tests/ui/test_pipeline_view.py``.</extracomment>
        <translation>se {m} = 1</translation>
    </message>
    <message>
        <source>if {m} = 0</source>
        <translation>se {m} = 0</translation>
    </message>
    <message>
        <source>for every key: 1 is added, nothing is masked</source>
        <translation>para toda chave: soma-se 1, nada é mascarado</translation>
    </message>
    <message>
        <source>masked</source>
        <translation>mascarada</translation>
    </message>
    <message>
        <source>A query with no valid key gets uniform weights over all keys.</source>
        <translation>Uma consulta sem chave válida recebe pesos uniformes sobre todas as chaves.</translation>
    </message>
    <message>
        <source>A query with no valid key gets weights 0 (and output 0).</source>
        <translation>Uma consulta sem chave válida recebe pesos 0 (e saída 0).</translation>
    </message>
    <message>
        <source>A query with no valid key gets NaN weights (exp(−∞)/0).</source>
        <translation>Uma consulta sem chave válida recebe pesos NaN (exp(−∞)/0).</translation>
    </message>
    <message>
        <source>A query with no valid key gets weights 0, as PyTorch&apos;s SDPA does.</source>
        <translation>Uma consulta sem chave válida recebe pesos 0, como faz o SDPA do PyTorch.</translation>
    </message>
    <message>
        <source>Bug on purpose: the 0/1 mask is added to the scores instead of masking them.</source>
        <translation>Bug de propósito: a máscara 0/1 é somada às pontuações em vez de mascará-las.</translation>
    </message>
    <message>
        <source>Bug on purpose: the mask&apos;s polarity is flipped, padding is attended.</source>
        <translation>Bug de propósito: a polaridade da máscara está invertida, o padding recebe atenção.</translation>
    </message>
    <message>
        <source>{m} = 1 when key {i} may be attended (within the valid length, and causal when set)</source>
        <translation>{m} = 1 quando a chave {i} pode receber atenção (dentro do comprimento válido, e causal quando ativado)</translation>
    </message>
    <message>
        <source>Mask mode {name}.</source>
        <translation>Modo de máscara {name}.</translation>
    </message>
    <message>
        <source>dropout zeroes each weight with probability {p} and scales the rest by 1/(1 − {p}), in training only</source>
        <translation>o dropout zera cada peso com probabilidade {p} e multiplica os demais por 1/(1 − {p}), só no treinamento</translation>
    </message>
    <message>
        <source>no dropout: the weights multiply the values as they are</source>
        <translation>sem dropout: os pesos multiplicam os valores como estão</translation>
    </message>
    <message>
        <source>1. Scoring function: {name}</source>
        <translation>1. Função de pontuação: {name}</translation>
    </message>
    <message>
        <source>2. Masked softmax: the attention weights</source>
        <translation>2. Softmax mascarado: os pesos de atenção</translation>
    </message>
    <message>
        <source>3. Attention pooling: the output</source>
        <translation>3. Pooling de atenção: a saída</translation>
    </message>
    <message>
        <source>All queries at once</source>
        <translation>Todas as consultas de uma vez</translation>
    </message>
</context>
<context>
    <name>Heads</name>
    <message>
        <source>{call} recorded attention weights only</source>
        <extracomment>Token texts that mark padding in the common tokenisers (BERT, T5/Llama, RoBERTa, GPT-2&apos;s usual pad-as-EOS): used to find padding that a mask failed to mask.</extracomment>
        <translation>{call} registrou só pesos de atenção</translation>
    </message>
    <message>
        <source>Entropy</source>
        <extracomment>The per-head statistics of the overview: name -&gt; (label, description).</extracomment>
        <translation>Entropia</translation>
    </message>
    <message>
        <source>How spread each query&apos;s attention is, 0 (one key) to 1 (uniform over its allowed keys); mean over real queries</source>
        <translation>Quão espalhada é a atenção de cada consulta, de 0 (uma chave) a 1 (uniforme sobre as chaves permitidas); média sobre as consultas reais</translation>
    </message>
    <message>
        <source>Attention to the first token</source>
        <translation>Atenção ao primeiro token</translation>
    </message>
    <message>
        <source>Weight on key 0 (often [CLS] or &lt;s&gt;: an attention sink); mean over real queries</source>
        <translation>Peso na chave 0 (muitas vezes [CLS] ou &lt;s&gt;: um sumidouro de atenção); média sobre as consultas reais</translation>
    </message>
    <message>
        <source>Attention to padding</source>
        <translation>Atenção ao padding</translation>
    </message>
    <message>
        <source>Weight on padding keys (from the padding mask and pad tokens); anything above 0 is a masking bug; mean over real queries</source>
        <translation>Peso nas chaves de padding (pela máscara de padding e pelos tokens de padding); qualquer valor acima de 0 é um bug de mascaramento; média sobre as consultas reais</translation>
    </message>
    <message>
        <source>Attention to itself</source>
        <translation>Atenção a si mesma</translation>
    </message>
    <message>
        <source>Weight of query i on key i (self-attention); mean over real queries</source>
        <translation>Peso da consulta i na chave i (autoatenção); média sobre as consultas reais</translation>
    </message>
    <message>
        <source>Largest weight</source>
        <translation>Maior peso</translation>
    </message>
    <message>
        <source>Each query&apos;s largest weight (1: it looks at one key only); mean over real queries</source>
        <translation>O maior peso de cada consulta (1: ela olha para uma única chave); média sobre as consultas reais</translation>
    </message>
</context>
<context>
    <name>HeadsView</name>
    <message>
        <source>&amp;Batch element</source>
        <extracomment>A small multiple&apos;s least size: a 128-token map still shows its structure at 200 pixels. What the maps show: (layer, batch, scale...), weights, mask; None: nothing yet.</extracomment>
        <translation>Elemento do &amp;lote</translation>
    </message>
    <message>
        <source>The batch element the heads are shown for (every view follows)</source>
        <translation>O elemento do lote cujas cabeças são mostradas (todas as vistas acompanham)</translation>
    </message>
    <message>
        <source>Every head of the layer, one colour scale; click a head to show it in every view</source>
        <translation>Todas as cabeças da camada, com uma só escala de cores; clique em uma cabeça para mostrá-la em todas as vistas</translation>
    </message>
    <message>
        <source>head {h}</source>
        <translation>cabeça {h}</translation>
    </message>
    <message>
        <source>head {h}, ablated</source>
        <translation>cabeça {h}, removida</translation>
    </message>
    <message>
        <source>{call}, head {h}, batch {b}</source>
        <translation>{call}, cabeça {h}, lote {b}</translation>
    </message>
    <message>
        <source>query {r} {qt} → key {c} {kt}</source>
        <translation>consulta {r} {qt} → chave {c} {kt}</translation>
    </message>
    <message>
        <source>weight {value}</source>
        <translation>peso {value}</translation>
    </message>
    <message>
        <source>(masked)</source>
        <translation>(mascarada)</translation>
    </message>
    <message>
        <source>click to show this head everywhere</source>
        <translation>clique para mostrar esta cabeça em todas as vistas</translation>
    </message>
    <message>
        <source>{call}: 1 head, batch {b}</source>
        <translation>{call}: 1 cabeça, lote {b}</translation>
    </message>
    <message>
        <source>{call}: {n} heads, batch {b}</source>
        <translation>{call}: {n} cabeças, lote {b}</translation>
    </message>
    <message>
        <source>One head here: open a file of a model&apos;s tensors with heads (File &gt; Open), or a capture, to see every head of a layer side by side.</source>
        <translation>Uma só cabeça aqui: abra um arquivo com os tensores de um modelo com cabeças (Arquivo &gt; Abrir), ou uma captura, para ver lado a lado todas as cabeças de uma camada.</translation>
    </message>
    <message>
        <source>one colour scale for every head</source>
        <translation>uma só escala de cores para todas as cabeças</translation>
    </message>
    <message>
        <source>Restore head {h}</source>
        <translation>Restaurar a cabeça {h}</translation>
    </message>
    <message>
        <source>Ablate head {h}</source>
        <translation>Remover a cabeça {h}</translation>
    </message>
</context>
<context>
    <name>Heatmap</name>
    <message>
        <source>Keys</source>
        <extracomment>The title&apos;s text is now this many pixels high (it wrapped or unwrapped): maps kept level follow. Label every row/col when there are at most this many; beyond that the axis picks integer ticks itself.</extracomment>
        <translation>Chaves</translation>
    </message>
    <message>
        <source>Queries</source>
        <translation>Consultas</translation>
    </message>
    <message>
        <source>Attention heatmap</source>
        <extracomment>How much presentation mode (F5) enlarges the text of every heatmap and plot.</extracomment>
        <translation>Mapa de calor da atenção</translation>
    </message>
    <message>
        <source>{value} (constant)</source>
        <translation>{value} (constante)</translation>
    </message>
    <message>
        <source>{listed} and {n} more</source>
        <extracomment>(row, col) of the cell under the mouse, emitted when it changes. (row, col, Qt keyboard modifiers) of a cell clicked. The map was clicked anywhere (a small multiple chosen by a click, say).</extracomment>
        <translation>{listed} e mais {n}</translation>
    </message>
    <message>
        <source>Queries with no valid key (red bar, ∅): {rows}</source>
        <translation>Consultas sem chave válida (barra vermelha, ∅): {rows}</translation>
    </message>
    <message>
        <source>Hatched grey = masked (query may not attend key); magenta = NaN; cyan = ±inf.</source>
        <translation>Cinza hachurado = mascarada (a consulta não pode prestar atenção à chave); magenta = NaN; ciano = ±inf.</translation>
    </message>
    <message>
        <source>Attention heatmap: {rows} down, {columns} across.</source>
        <translation>Mapa de calor da atenção: {rows} na vertical, {columns} na horizontal.</translation>
    </message>
    <message>
        <source>Attention heatmap ({n_rows} x {n_cols}): {rows} down, {columns} across.</source>
        <translation>Mapa de calor da atenção ({n_rows} x {n_cols}): {rows} na vertical, {columns} na horizontal.</translation>
    </message>
    <message>
        <source>Hover a cell for its value.</source>
        <translation>Passe o mouse sobre uma célula para ver seu valor.</translation>
    </message>
    <message>
        <source>{label} (rows)</source>
        <translation>{label} (linhas)</translation>
    </message>
    <message>
        <source>{label} (columns)</source>
        <translation>{label} (colunas)</translation>
    </message>
    <message>
        <source>Colour scale ({name}): {low} to {high}. NaN/inf are excluded from the range and drawn in magenta/cyan.</source>
        <translation>Escala de cores ({name}): de {low} a {high}. NaN/inf ficam fora da faixa e são desenhados em magenta/ciano.</translation>
    </message>
    <message>
        <source>Hover a cell to see its value.</source>
        <translation>Passe o mouse sobre uma célula para ver seu valor.</translation>
    </message>
    <message>
        <source>query {index}</source>
        <translation>consulta {index}</translation>
    </message>
    <message>
        <source>key {index}</source>
        <translation>chave {index}</translation>
    </message>
    <message>
        <source>(masked)</source>
        <translation>(mascarada)</translation>
    </message>
    <message>
        <source>query {index} has no valid key</source>
        <translation>a consulta {index} não tem chave válida</translation>
    </message>
</context>
<context>
    <name>InputsPanel</name>
    <message>
        <source>&amp;Queries</source>
        <extracomment>Floating-point types (their names are the same in every language). Its tab in the inputs panel (marked, with its accelerator). How sentences name it: &quot;Fill keys with zeros&quot;, &quot;Edit 3 cells of valid lengths&quot;. The tab&apos;s tooltip. How one of its cells is named in messages (&quot;k2, d1: not a number&quot; says which key). The inputs, in the order of the inputs panel&apos;s tabs.</extracomment>
        <translation>&amp;Consultas</translation>
    </message>
    <message>
        <source>&amp;Keys</source>
        <translation>C&amp;haves</translation>
    </message>
    <message>
        <source>&amp;Values</source>
        <translation>&amp;Valores</translation>
    </message>
    <message>
        <source>Valid &amp;lengths</source>
        <translation>Co&amp;mprimentos</translation>
    </message>
    <message>
        <source>Query vectors of the selected batch element: one row per query</source>
        <translation>Vetores de consulta do elemento do lote selecionado: uma linha por consulta</translation>
    </message>
    <message>
        <source>Key vectors of the selected batch element: one row per key</source>
        <translation>Vetores de chave do elemento do lote selecionado: uma linha por chave</translation>
    </message>
    <message>
        <source>Value vectors of the selected batch element: one row per key-value pair</source>
        <translation>Vetores de valor do elemento do lote selecionado: uma linha por par chave-valor</translation>
    </message>
    <message>
        <source>Valid lengths: keys at or past the valid length are masked</source>
        <translation>Comprimentos válidos: as chaves a partir do comprimento válido são mascaradas</translation>
    </message>
    <message>
        <source>Random</source>
        <extracomment>The fill kinds as the combo box shows them.</extracomment>
        <translation>Aleatório</translation>
    </message>
    <message>
        <source>Zeros</source>
        <translation>Zeros</translation>
    </message>
    <message>
        <source>Ones</source>
        <translation>Uns</translation>
    </message>
    <message>
        <source>Arange (book&apos;s values)</source>
        <translation>Arange (valores do livro)</translation>
    </message>
    <message>
        <source>query</source>
        <translation>consulta</translation>
    </message>
    <message>
        <source>key</source>
        <translation>chave</translation>
    </message>
    <message>
        <source>value</source>
        <translation>valor</translation>
    </message>
    <message>
        <source>batch {index}</source>
        <extracomment>The tabs: the inputs as the catalogue declares them (title, tooltip, how a cell is named).</extracomment>
        <translation>lote {index}</translation>
    </message>
    <message>
        <source>length</source>
        <translation>comprimento</translation>
    </message>
    <message>
        <source>Batch element shown in the tables and highlighted in the results</source>
        <translation>Elemento do lote mostrado nas tabelas e destacado nos resultados</translation>
    </message>
    <message>
        <source>Batch &amp;element</source>
        <translation>&amp;Elemento do lote</translation>
    </message>
    <message>
        <source>What to fill the current tensor with (every batch element)</source>
        <translation>Com o que preencher o tensor atual (todos os elementos do lote)</translation>
    </message>
    <message>
        <source>Seed of the random fill, so the same seed gives the same values</source>
        <translation>Semente do preenchimento aleatório: a mesma semente dá os mesmos valores</translation>
    </message>
    <message>
        <source>&amp;Fill</source>
        <translation>P&amp;reencher</translation>
    </message>
    <message>
        <source>Fill the tensor of the current tab (one undoable edit)</source>
        <translation>Preenche o tensor da aba atual (uma edição que pode ser desfeita)</translation>
    </message>
    <message>
        <source>s&amp;eed</source>
        <translation>se&amp;mente</translation>
    </message>
    <message>
        <source>La&amp;yer</source>
        <translation>C&amp;amada</translation>
    </message>
    <message>
        <source>The model&apos;s attention call shown (a layer, in call order)</source>
        <translation>A chamada de atenção do modelo que é mostrada (uma camada, na ordem das chamadas)</translation>
    </message>
    <message>
        <source>&amp;Head</source>
        <translation>Ca&amp;beça</translation>
    </message>
    <message>
        <source>The attention head shown in the tables and every view; the Heads tab shows them all</source>
        <translation>A cabeça de atenção mostrada nas tabelas e em todas as vistas; a aba Cabeças mostra todas elas</translation>
    </message>
    <message>
        <source>The input tensors; type, paste (Ctrl+V) or copy (Ctrl+C) blocks of cells</source>
        <translation>Os tensores de entrada; digite, cole (Ctrl+V) ou copie (Ctrl+C) blocos de células</translation>
    </message>
    <message>
        <source>valid length</source>
        <translation>comprimento válido</translation>
    </message>
    <message>
        <source>this call recorded its attention weights only: there are no queries, keys or values to edit</source>
        <translation>esta chamada registrou só os seus pesos de atenção: não há consultas, chaves nem valores para editar</translation>
    </message>
    <message>
        <source>Valid lengths are off: pick 1-D or 2-D under Attention &gt; Valid lengths</source>
        <translation>Os comprimentos válidos estão desligados: escolha 1-D ou 2-D em Atenção &gt; Comprimentos válidos</translation>
    </message>
</context>
<context>
    <name>Intervene</name>
    <message>
        <source>edits: a {type} is no MaskEdit, AblateHead or ReplaceWeights</source>
        <extracomment>(batch, positions) KL(before || after) of the next-token distribution; None for a model whose output has no ``logits``. (ids, probabilities), each (batch, positions, k): the most likely next tokens.</extracomment>
        <translation>edits: um {type} não é MaskEdit, AblateHead nem ReplaceWeights</translation>
    </message>
    <message>
        <source>{name} did not run again: its edits were not applied</source>
        <translation>{name} não foi executada de novo: suas edições não foram aplicadas</translation>
    </message>
    <message>
        <source>the model returned a {type}, which holds no tensor to compare</source>
        <translation>o modelo devolveu um {type}, que não contém tensor para comparar</translation>
    </message>
    <message>
        <source>edits: call {call} is not a call of this run ({count} calls: {first}...)</source>
        <translation>edits: a chamada {call} não é uma chamada desta execução ({count} chamadas: {first}...)</translation>
    </message>
    <message>
        <source>edits: cell {cell} is outside call {call} (batch, heads, queries, keys) {shape}</source>
        <translation>edits: a célula {cell} está fora da chamada {call} (lote, cabeças, consultas, chaves) {shape}</translation>
    </message>
    <message>
        <source>edits: head {head} (batch {batch}) is not in call {call} {shape}</source>
        <translation>edits: a cabeça {head} (lote {batch}) não está na chamada {call} {shape}</translation>
    </message>
    <message>
        <source>edits: {shape} does not fit call {call} (batch, heads, queries, keys) {call_shape}</source>
        <translation>edits: {shape} não cabe na chamada {call} (lote, cabeças, consultas, chaves) {call_shape}</translation>
    </message>
    <message>
        <source>edits: call {call} ran with queries {shape} this time: not edited</source>
        <translation>edits: a chamada {call} rodou desta vez com consultas {shape}: não editada</translation>
    </message>
</context>
<context>
    <name>Invariance</name>
    <message>
        <source>--checks {value}: expected some of {known}</source>
        <extracomment>The command lines that end ``--help``.</extracomment>
        <translation>--checks {value}: esperados alguns de {known}</translation>
    </message>
    <message>
        <source>--tol {value}: expected a number &gt;= 0, e.g. 1e-4</source>
        <translation>--tol {value}: esperado um número &gt;= 0, p. ex. 1e-4</translation>
    </message>
    <message>
        <source>the model&apos;s forward raised {error}</source>
        <translation>o forward do modelo lançou {error}</translation>
    </message>
    <message>
        <source>error: {note}</source>
        <translation>erro: {note}</translation>
    </message>
    <message>
        <source>warning: {note}</source>
        <translation>aviso: {note}</translation>
    </message>
    <message>
        <source>{errors}, {warnings} from {checks}</source>
        <translation>{errors}, {warnings} de {checks}</translation>
    </message>
    <message>
        <source>{target}: expected MODULE:FACTORY, e.g. mypackage.models:tiny_llama</source>
        <extracomment>Run ``attnviz check`` with ``argv`` (without the word &quot;check&quot;); returns the exit status. The console script ``attnviz-check`` (its arguments are the process&apos;s).</extracomment>
        <translation>{target}: esperado MÓDULO:FÁBRICA, p. ex. mypackage.models:tiny_llama</translation>
    </message>
    <message>
        <source>{module} cannot be imported: {error}</source>
        <translation>{module} não pode ser importado: {error}</translation>
    </message>
    <message>
        <source>{module} has no function {name}</source>
        <translation>{module} não tem a função {name}</translation>
    </message>
    <message>
        <source>the factory {target} raised {error}</source>
        <translation>a fábrica {target} lançou {error}</translation>
    </message>
    <message>
        <source>{target} returned {type} as the model; expected a torch.nn.Module (a callable)</source>
        <translation>{target} retornou {type} como modelo; esperava-se um torch.nn.Module (um chamável)</translation>
    </message>
    <message>
        <source>{found} (at {where})</source>
        <translation>{found} (em {where})</translation>
    </message>
    <message>
        <source>{target} must return (model, inputs), inputs a dict; it returned {type}</source>
        <translation>{target} deve devolver (model, inputs), inputs um dict; devolveu {type}</translation>
    </message>
    <message>
        <source>the model&apos;s output</source>
        <translation>a saída do modelo</translation>
    </message>
    <message>
        <source>positions {list}</source>
        <translation>posições {list}</translation>
    </message>
    <message>
        <source>checks: {given} is not among {known}</source>
        <extracomment>float32 runs of one model on other batch shapes, kernels or cache layouts agree to ~1e-6.</extracomment>
        <translation>checks: {given} não está entre {known}</translation>
    </message>
    <message>
        <source>model must be a torch.nn.Module (a callable), not {type}</source>
        <translation>model deve ser um torch.nn.Module (um chamável), não {type}</translation>
    </message>
    <message>
        <source>inputs must be the model&apos;s keyword arguments (a dict, a tokenizer&apos;s batch)</source>
        <translation>inputs devem ser os argumentos nomeados do modelo (um dict, o lote de um tokenizador)</translation>
    </message>
    <message>
        <source>{checks}: not checked (two identical runs of the model differ: every difference would be that noise)</source>
        <translation>{checks}: não verificado (duas execuções idênticas do modelo diferem: toda diferença seria esse ruído)</translation>
    </message>
    <message>
        <source>implementations: {name} is not one of {known}</source>
        <translation>implementations: {name} não é uma de {known}</translation>
    </message>
    <message>
        <source>two identical runs of the model differ (largest difference {largest:.3g}): the model is in training mode and dropout is active in {modules}, so its attention is random; call model.eval() before inference (the other checks were not run: they would blame this noise on padding, caches or paths)</source>
        <translation>duas execuções idênticas do modelo diferem (maior diferença {largest:.3g}): o modelo está em modo de treino e o dropout está ativo em {modules}, então sua atenção é aleatória; chame model.eval() antes da inferência (as outras verificações não rodaram: atribuiriam esse ruído ao preenchimento, a caches ou a caminhos)</translation>
    </message>
    <message>
        <source>two identical runs give different results (largest difference {largest:.3g}) though no dropout is active{training}: something random or stateful runs (sampling, a non-deterministic kernel, state kept between calls); the other checks were not run</source>
        <translation>duas execuções idênticas dão resultados diferentes (maior diferença {largest:.3g}) embora nenhum dropout esteja ativo{training}: algo aleatório ou com estado roda (amostragem, um kernel não determinístico, estado guardado entre chamadas); as outras verificações não rodaram</translation>
    </message>
    <message>
        <source> (the model is in training mode)</source>
        <translation> (o modelo está em modo de treino)</translation>
    </message>
    <message>
        <source>padding: not checked (the model takes no attention_mask, or the inputs no input_ids)</source>
        <extracomment>The last cause found was positions not adjusted to left padding (``_padding_cause``).</extracomment>
        <translation>padding: não verificado (o modelo não recebe attention_mask, ou as entradas não têm input_ids)</translation>
    </message>
    <message>
        <source>batch element {b} alone</source>
        <translation>o elemento {b} do lote sozinho</translation>
    </message>
    <message>
        <source>the batch padded on the {side}</source>
        <translation>o lote preenchido à {side}</translation>
    </message>
    <message>
        <source>the model fails on {what} though it runs on the batch: {error} (a mask or position of one sequence&apos;s length applied to another&apos;s)</source>
        <translation>o modelo falha em {what} embora rode no lote: {error} (uma máscara ou posição do comprimento de uma sequência aplicada a outra)</translation>
    </message>
    <message>
        <source>the model fails on {what} in its cross-attention {name} though it runs on the batch: a decoder-length mask on the encoder&apos;s keys (the decoder&apos;s {decoder} positions against the encoder&apos;s {encoder} keys: {error}); in the batch both were as long, so the decoder&apos;s padding passed for the encoder&apos;s; pass the encoder&apos;s attention_mask to cross-attention</source>
        <translation>o modelo falha em {what} na sua atenção cruzada {name} embora rode no lote: uma máscara do comprimento do decodificador sobre as chaves do codificador (as {decoder} posições do decodificador contra as {encoder} chaves do codificador: {error}); no lote ambos tinham o mesmo comprimento, então o preenchimento do decodificador passou pelo do codificador; passe a attention_mask do codificador à atenção cruzada</translation>
    </message>
    <message>
        <source>the model fails on {what} in {name} though it runs on the batch: {error} (a mask or position of one sequence&apos;s length applied to another&apos;s)</source>
        <translation>o modelo falha em {what} em {name} embora rode no lote: {error} (uma máscara ou posição do comprimento de uma sequência aplicada a outra)</translation>
    </message>
    <message>
        <source>{cause}; this model attends both ways (an encoder) and its batch is padded on the right, so only left padding would move it</source>
        <translation>{cause}; este modelo atende nos dois sentidos (um codificador) e seu lote está preenchido à direita, então só o preenchimento à esquerda o mudaria</translation>
    </message>
    <message>
        <source>in the batch as given, against its attention mask: {text}</source>
        <translation>no lote como foi dado, comparado com sua máscara de atenção: {text}</translation>
    </message>
    <message>
        <source>the batch&apos;s position_ids are not each sequence&apos;s own: batch element {b}&apos;s first real token is at position {at} in the batch and at 0 alone (position_ids counted over the pads, such as arange over a left-padded batch); with each sequence&apos;s own positions the batch agrees with every sequence alone, so its masks were ruled out; pass position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)</source>
        <translation>os position_ids do lote não são os de cada sequência: o primeiro token real do elemento {b} do lote está na posição {at} no lote e na 0 sozinho (position_ids contados sobre o preenchimento, como arange sobre um lote preenchido à esquerda); com as posições próprias de cada sequência o lote concorda com cada sequência sozinha, então suas máscaras foram descartadas como causa; passe position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)</translation>
    </message>
    <message>
        <source>the batch&apos;s positions were not adjusted to its padding: batch element {b}&apos;s first real token is at position {at} in the batch and at 0 alone; with each sequence&apos;s own positions the batch agrees with every sequence alone, so its masks were ruled out; pass position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0), as generate() does</source>
        <translation>as posições do lote não foram ajustadas ao seu preenchimento: o primeiro token real do elemento {b} do lote está na posição {at} no lote e na 0 sozinho; com as posições próprias de cada sequência o lote concorda com cada sequência sozinha, então suas máscaras foram descartadas como causa; passe position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0), como generate() faz</translation>
    </message>
    <message>
        <source>these sequences attend differently in the batch as given than alone, though each call&apos;s mask follows the attention mask: something other than the mask depends on the padding (positions, a pad token&apos;s embedding reaching real tokens); compare this call in both runs (attnviz.compare)</source>
        <translation>estas sequências atendem de outro modo no lote como foi dado do que sozinhas, embora a máscara de cada chamada siga a máscara de atenção: algo além da máscara depende do preenchimento (posições, o embedding de um token de preenchimento chegando a tokens reais); compare esta chamada nas duas execuções (attnviz.compare)</translation>
    </message>
    <message>
        <source>left padding changes these sequences: their positions were not adjusted (a left-padded row&apos;s first real token is at position {first}, alone at 0); pass position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0), as generate() does</source>
        <translation>o preenchimento à esquerda muda estas sequências: suas posições não foram ajustadas (o primeiro token real de uma linha preenchida à esquerda está na posição {first}, sozinho na 0); passe position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0), como generate() faz</translation>
    </message>
    <message>
        <source>the padding is not masked here: real tokens attend to the {side} padding; pass the attention_mask to this call (a mask lost, inverted or built for the other side)</source>
        <translation>o preenchimento não é mascarado aqui: tokens reais atendem ao preenchimento ({side}); passe a attention_mask para esta chamada (uma máscara perdida, invertida ou construída para o outro lado)</translation>
    </message>
    <message>
        <source>these sequences attend differently when padded on the {side} than alone: the mask or the positions depend on the padding; compare this call&apos;s mask in both runs (attnviz.compare)</source>
        <translation>estas sequências atendem de outro modo quando preenchidas ({side}) do que sozinhas: a máscara ou as posições dependem do preenchimento; compare a máscara desta chamada nas duas execuções (attnviz.compare)</translation>
    </message>
    <message>
        <source>positions, not the mask: the model&apos;s {module} embedding gave batch element {b}&apos;s first real token (row {row}) position {given} in the batch and {alone} alone: its positions count the pads (arange over a left-padded batch, computed by the model or given to it), so its real tokens get other queries and keys; each call&apos;s mask follows the attention mask, so the masks were ruled out; compute positions from the attention mask, (attention_mask.cumsum(-1) - 1).clamp(min=0)</source>
        <translation>as posições, não a máscara: o embedding {module} do modelo deu ao primeiro token real do elemento {b} do lote (linha {row}) a posição {given} no lote e {alone} sozinho: suas posições contam o preenchimento (arange sobre um lote preenchido à esquerda, calculado pelo modelo ou dado a ele), então seus tokens reais recebem outras consultas e chaves; a máscara de cada chamada segue a máscara de atenção, então as máscaras foram descartadas como causa; calcule as posições a partir da máscara de atenção, (attention_mask.cumsum(-1) - 1).clamp(min=0)</translation>
    </message>
    <message>
        <source>a cached step of {tokens} token(s) gives another output than the full forward, though every attention call agrees: look at the positions (cache_position, position_ids) of the step</source>
        <translation>um passo com cache de {tokens} token(s) dá outra saída que o forward completo, embora todas as chamadas de atenção concordem: veja as posições (cache_position, position_ids) do passo</translation>
    </message>
    <message>
        <source>implementations: not checked (not a transformers model with attention implementations)</source>
        <translation>implementations: não verificado (não é um modelo do transformers com implementações de atenção)</translation>
    </message>
    <message>
        <source>the {path} and {reference} implementations disagree here: each path builds its own mask; compare this call&apos;s mask in both (attnviz.compare)</source>
        <translation>as implementações {path} e {reference} discordam aqui: cada caminho constrói sua própria máscara; compare a máscara desta chamada nas duas (attnviz.compare)</translation>
    </message>
    <message>
        <source>the {path} path lets queries see later keys that {reference} hides: its causal mask is missing (build the causal mask for every implementation, also when weights are asked for)</source>
        <translation>o caminho {path} deixa as consultas verem chaves posteriores que {reference} esconde: falta a sua máscara causal (construa a máscara causal para toda implementação, também quando os pesos são pedidos)</translation>
    </message>
    <message>
        <source>the {path} path lets queries see keys that {reference} hides (padding or a window): its mask lost a part</source>
        <translation>o caminho {path} deixa as consultas verem chaves que {reference} esconde (preenchimento ou uma janela): sua máscara perdeu uma parte</translation>
    </message>
    <message>
        <source>dtypes: {name} is not a floating dtype</source>
        <translation>dtypes: {name} não é um dtype de ponto flutuante</translation>
    </message>
    <message>
        <source>kv_cache: not checked: {model}.forward takes no KV-cache argument (past_key_values, cache, past, ...); check a model that generates with a cache, or leave kv_cache out of the checks</source>
        <translation>kv_cache: não verificado: {model}.forward não recebe argumento de cache KV (past_key_values, cache, past, ...); verifique um modelo que gere com cache, ou tire kv_cache das verificações</translation>
    </message>
    <message>
        <source>kv_cache: not checked: the inputs hold no {key} (batch, tokens) to step through; pass the token ids as {key}</source>
        <translation>kv_cache: não verificado: as entradas não têm {key} (lote, tokens) para percorrer passo a passo; passe os ids dos tokens como {key}</translation>
    </message>
    <message>
        <source>kv_cache: not checked: fewer than 4 tokens to step through (a prefill and two steps); pass a longer batch</source>
        <translation>kv_cache: não verificado: menos de 4 tokens para percorrer (um prefill e dois passos); passe um lote mais longo</translation>
    </message>
    <message>
        <source>kv_cache: not checked: the model returned no cache with use_cache=True (its {name} argument had nothing to take); switch its cache on (config.use_cache)</source>
        <translation>kv_cache: não verificado: o modelo não devolveu cache com use_cache=True (seu argumento {name} não teria o que receber); ligue o cache dele (config.use_cache)</translation>
    </message>
    <message>
        <source>a cached step of {tokens} token(s) attends differently from the full forward though its mask lets through the same keys on these rows (the mask was ruled out): its queries or keys differ, so its positions were not offset by the {cached} cached token(s) (or something else before attention depends on the cache); pass position_ids / cache_position starting at the cache&apos;s length</source>
        <translation>um passo com cache de {tokens} token(s) atende de outro modo que o forward completo embora sua máscara deixe passar as mesmas chaves nestas linhas (a máscara foi descartada como causa): suas consultas ou chaves diferem, então suas posições não foram deslocadas pelos {cached} token(s) em cache (ou outra coisa antes da atenção depende do cache); passe position_ids / cache_position começando no comprimento do cache</translation>
    </message>
    <message>
        <source> (positions ruled out: the step&apos;s queries and keys equal the full forward&apos;s at the same positions)</source>
        <translation> (posições descartadas como causa: as consultas e chaves do passo são iguais às do forward completo nas mesmas posições)</translation>
    </message>
    <message>
        <source>a cached step of {tokens} token(s) differs from the full forward: is_causal=True aligns the causal mask top-left when the {queries} queries are fewer than the {keys} keys (SDPA), so the new tokens cannot see the cached past; pass a mask aligned bottom-right instead{ruled_out}</source>
        <translation>um passo com cache de {tokens} token(s) difere do forward completo: is_causal=True alinha a máscara causal no canto superior esquerdo quando as {queries} consultas são menos que as {keys} chaves (SDPA), então os tokens novos não veem o passado em cache; passe uma máscara alinhada no canto inferior direito{ruled_out}</translation>
    </message>
    <message>
        <source>a cached step of {tokens} token(s) attends differently from the full forward: its mask hides cached keys or shows later ones; build the step&apos;s mask over the cache&apos;s length, aligned bottom-right{ruled_out}</source>
        <translation>um passo com cache de {tokens} token(s) atende de outro modo que o forward completo: sua máscara esconde chaves em cache ou mostra chaves posteriores; construa a máscara do passo sobre o comprimento do cache, alinhada no canto inferior direito{ruled_out}</translation>
    </message>
    <message>
        <source>queries and keys</source>
        <translation>consultas e chaves</translation>
    </message>
    <message>
        <source>queries</source>
        <translation>consultas</translation>
    </message>
    <message>
        <source>keys</source>
        <translation>chaves</translation>
    </message>
    <message>
        <source>the mask was ruled out: the step&apos;s mask lets through the same keys as the full forward&apos;s on these rows</source>
        <translation>a máscara foi descartada como causa: a máscara do passo deixa passar as mesmas chaves que a do forward completo nestas linhas</translation>
    </message>
    <message>
        <source>the step&apos;s mask differs from the full forward&apos;s too</source>
        <translation>a máscara do passo também difere da do forward completo</translation>
    </message>
    <message>
        <source>with other queries and keys, its weights differ whatever the mask</source>
        <translation>com outras consultas e chaves, seus pesos diferem qualquer que seja a máscara</translation>
    </message>
    <message>
        <source>a cached step of {tokens} token(s) has other {which} than the full forward at the same positions (largest relative difference {largest:.3g}) from the same tokens: the positions of the step are wrong, not its mask; rotary or position embeddings were not offset by the {cached} cached token(s) (positions restarted at 0, or counted from another origin); pass position_ids / cache_position starting at the cache&apos;s length; {mask}</source>
        <translation>um passo com cache de {tokens} token(s) tem outras {which} que o forward completo nas mesmas posições (maior diferença relativa {largest:.3g}) a partir dos mesmos tokens: as posições do passo estão erradas, não sua máscara; os embeddings rotativos ou de posição não foram deslocados pelos {cached} token(s) em cache (posições reiniciadas em 0, ou contadas a partir de outra origem); passe position_ids / cache_position começando no comprimento do cache; {mask}</translation>
    </message>
    <message>
        <source>a cached step of {tokens} token(s) was given other positions than the full forward gives the same tokens: its {module} embedding was called with {given} where the full forward has {expected} (batch element {e}, after {cached} cached token(s)): the positions of the step are wrong, not its mask (positions restarted at 0, or counted from another origin); pass position_ids / cache_position starting at the cache&apos;s length; {mask}</source>
        <translation>um passo com cache de {tokens} token(s) recebeu outras posições que as que o forward completo dá aos mesmos tokens: seu embedding {module} foi chamado com {given} onde o forward completo tem {expected} (elemento {e} do lote, depois de {cached} token(s) em cache): as posições do passo estão erradas, não sua máscara (posições reiniciadas em 0, ou contadas a partir de outra origem); passe position_ids / cache_position começando no comprimento do cache; {mask}</translation>
    </message>
    <message>
        <source>implementations: not checked (of {asked}, the model runs {ran} only)</source>
        <translation>implementations: não verificado (de {asked}, o modelo executa apenas {ran})</translation>
    </message>
    <message>
        <source>implementations: not checked (the model runs none of {asked})</source>
        <translation>implementations: não verificado (o modelo não executa nenhuma de {asked})</translation>
    </message>
    <message>
        <source>the {path} and {reference} paths compute different attention for the same mask (the mask was ruled out: both let the same keys through on every real row), in heads {heads}; what differs, in the {odd} path: {what}</source>
        <translation>os caminhos {path} e {reference} calculam atenções diferentes para a mesma máscara (a máscara foi descartada como causa: ambos deixam passar as mesmas chaves em toda linha real), nas cabeças {heads}; o que difere, no caminho {odd}: {what}</translation>
    </message>
    <message>
        <source>not told apart (the paths&apos; queries, keys or values already differ)</source>
        <translation>não distinguido (as consultas, chaves ou valores dos caminhos já diferem)</translation>
    </message>
    <message>
        <source>the model does not run in {dtype}: {error}</source>
        <translation>o modelo não roda em {dtype}: {error}</translation>
    </message>
    <message>
        <source>these rows go NaN in {dtype} and not in float32: the mask&apos;s fill {value:.3g} overflows to -inf in {dtype}, so a row with every key masked (padding) is NaN, and reaches real tokens through the values; fill with torch.finfo(scores.dtype).min</source>
        <translation>estas linhas viram NaN em {dtype} e não em float32: o preenchimento {value:.3g} da máscara transborda para -inf em {dtype}, então uma linha com todas as chaves mascaradas (preenchimento) é NaN e chega aos tokens reais pelos valores; preencha com torch.finfo(scores.dtype).min</translation>
    </message>
    <message>
        <source>these rows go NaN in {dtype} and not in float32, inside the attention code: its output is NaN where attnviz&apos;s recomputation of the same queries, keys, values and mask is finite, so a fill or bias of its own overflows {dtype} (-1e9 and finfo(float32).min are -inf there, and 0 * -inf is NaN); fill with torch.finfo(scores.dtype).min</source>
        <translation>estas linhas viram NaN em {dtype} e não em float32, dentro do código de atenção: sua saída é NaN onde o recálculo do attnviz com as mesmas consultas, chaves, valores e máscara é finito, então um preenchimento ou viés próprio transborda {dtype} (-1e9 e finfo(float32).min são -inf ali, e 0 * -inf é NaN); preencha com torch.finfo(scores.dtype).min</translation>
    </message>
    <message>
        <source>these rows are NaN or infinite in {dtype} and finite in float32: a score, a fill or a sum overflows {dtype} (largest {largest:.3g}); compute the scores and softmax in float32</source>
        <translation>estas linhas são NaN ou infinitas em {dtype} e finitas em float32: um escore, um preenchimento ou uma soma transborda {dtype} (maior {largest:.3g}); calcule os escores e o softmax em float32</translation>
    </message>
    <message>
        <source>the output is NaN or infinite in {dtype} and finite in float32, though every attention call is finite: an overflow outside attention</source>
        <translation>a saída é NaN ou infinita em {dtype} e finita em float32, embora todas as chamadas de atenção sejam finitas: um transbordamento fora da atenção</translation>
    </message>
    <message>
        <source>pass position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)</source>
        <extracomment>Named modules listed in a sentence before &quot;...&quot;.</extracomment>
        <translation>passe position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)</translation>
    </message>
    <message>
        <source>the model takes no position_ids (or ignores them), so pad its inputs on the other side (the tokenizer&apos;s padding_side)</source>
        <translation>o modelo não recebe position_ids (ou os ignora), então preencha suas entradas do outro lado (o padding_side do tokenizador)</translation>
    </message>
    <message>
        <source>positions, not the mask: padded on the {side}, batch element {b}&apos;s real tokens get other queries and keys in this call than alone (largest difference {largest:.3g}), though every call before agrees and this call&apos;s mask hides the padding: their positions moved with the padding (position embeddings counted over the pads); the masks were ruled out; {fix}</source>
        <translation>as posições, não a máscara: preenchidos à {side}, os tokens reais do elemento {b} do lote recebem nesta chamada outras consultas e chaves que sozinhos (maior diferença {largest:.3g}), embora todas as chamadas anteriores coincidam e a máscara desta chamada esconda o preenchimento: suas posições se moveram com o preenchimento (embeddings de posição contados sobre os preenchimentos); as máscaras foram descartadas; {fix}</translation>
    </message>
    <message>
        <source>the scale: the scores are scaled by {label} ({used:.4g}) where the other path uses {expected:.4g}</source>
        <translation>a escala: os escores são escalados por {label} ({used:.4g}) onde o outro caminho usa {expected:.4g}</translation>
    </message>
    <message>
        <source>the grouping of KV heads: query heads 0-{last} read the KV heads [{got}] where the other path gives [{expected}] ({cause}, or the reverse)</source>
        <translation>o agrupamento das cabeças KV: as cabeças de consulta 0-{last} leem as cabeças KV [{got}] onde o outro caminho dá [{expected}] ({cause}, ou o contrário)</translation>
    </message>
    <message>
        <source>a score term (a bias, soft cap or position term one path adds or drops): neither another grouping of the KV heads nor another scale reproduces the output</source>
        <translation>um termo de escore (um viés, limite suave ou termo de posição que um caminho soma ou omite): nem outro agrupamento das cabeças KV nem outra escala reproduz a saída</translation>
    </message>
</context>
<context>
    <name>Lab</name>
    <message>
        <source>NaN weights</source>
        <extracomment>The convention every other one is compared with by default. What the lab holds besides its conventions&apos; engine results, per (batch, query, key) cell (and once), measured on (1, 2048, 2048) with 6 and 12 conventions, both scorings: each convention&apos;s classification and comparison masks; once, the intended and future masks and the float64 copies a comparison works on, and the allocator&apos;s own working space. Row classes, in order of precedence (a row gets the first that applies), with what they mean. How a row with no valid key is described in sentences, by its class. The sentences are English ``attnviz.text.tr.Message`` objects: the app shows them translated.</extracomment>
        <translation>pesos NaN</translation>
    </message>
    <message>
        <source>zero weights</source>
        <translation>pesos zero</translation>
    </message>
    <message>
        <source>uniform weights ({share}) over padding</source>
        <translation>pesos uniformes ({share}) sobre o padding</translation>
    </message>
    <message>
        <source>non-uniform weights over masked keys</source>
        <translation>pesos não uniformes sobre chaves mascaradas</translation>
    </message>
    <message>
        <source>weights on future keys</source>
        <translation>pesos em chaves futuras</translation>
    </message>
    <message>
        <source>weights on masked keys</source>
        <translation>pesos em chaves mascaradas</translation>
    </message>
    <message>
        <source>{label}, {alignment} causal</source>
        <translation>{label}, causal {alignment}</translation>
    </message>
    <message>
        <source>all</source>
        <translation>a totalidade</translation>
    </message>
    <message>
        <source>1/{keys} each</source>
        <translation>1/{keys} cada</translation>
    </message>
    <message>
        <source>other {mine} than {reference}</source>
        <translation>{mine} diferentes dos de {reference}</translation>
    </message>
    <message>
        <source>{mine} where {reference} gives {theirs}</source>
        <translation>{mine} onde {reference} dá {theirs}</translation>
    </message>
    <message>
        <source>{name}: {n} row with no valid key get {tail}</source>
        <translation>{name}: {n} linha sem chave válida recebe {tail}</translation>
    </message>
    <message>
        <source>{name}: {n} rows with no valid key get {tail}</source>
        <translation>{name}: {n} linhas sem chave válida recebem {tail}</translation>
    </message>
    <message>
        <source>{name}: {n} row with valid keys is NaN{cause}</source>
        <translation>{name}: {n} linha com chaves válidas é NaN{cause}</translation>
    </message>
    <message>
        <source>{name}: {n} rows with valid keys are NaN{cause}</source>
        <translation>{name}: {n} linhas com chaves válidas são NaN{cause}</translation>
    </message>
    <message>
        <source>{name}: {n} row with valid keys gets all-zero weights</source>
        <translation>{name}: {n} linha com chaves válidas recebe pesos todos zero</translation>
    </message>
    <message>
        <source>{name}: {n} rows with valid keys get all-zero weights</source>
        <translation>{name}: {n} linhas com chaves válidas recebem pesos todos zero</translation>
    </message>
    <message>
        <source>{n} future key</source>
        <translation>{n} chave futura</translation>
    </message>
    <message>
        <source>{n} future keys</source>
        <translation>{n} chaves futuras</translation>
    </message>
    <message>
        <source>{name}: {n} row attends to {keys} (after the query&apos;s {alignment} position), up to {share} of a row&apos;s weight</source>
        <translation>{name}: {n} linha presta atenção a {keys} (depois da posição {alignment} da consulta), até {share} do peso de uma linha</translation>
    </message>
    <message>
        <source>{name}: {n} rows attend to {keys} (after the query&apos;s {alignment} position), up to {share} of a row&apos;s weight</source>
        <translation>{name}: {n} linhas prestam atenção a {keys} (depois da posição {alignment} da consulta), até {share} do peso de uma linha</translation>
    </message>
    <message>
        <source>{n} masked key</source>
        <translation>{n} chave mascarada</translation>
    </message>
    <message>
        <source>{n} masked keys</source>
        <translation>{n} chaves mascaradas</translation>
    </message>
    <message>
        <source>{name}: {n} row with valid keys puts weight on {keys}, up to {share} of a row&apos;s weight, where {reference} gives them none</source>
        <translation>{name}: {n} linha com chaves válidas põe peso em {keys}, até {share} do peso de uma linha, onde {reference} não lhes dá nenhum</translation>
    </message>
    <message>
        <source>{name}: {n} rows with valid keys put weight on {keys}, up to {share} of a row&apos;s weight, where {reference} gives them none</source>
        <translation>{name}: {n} linhas com chaves válidas põem peso em {keys}, até {share} do peso de uma linha, onde {reference} não lhes dá nenhum</translation>
    </message>
    <message>
        <source>{n} key</source>
        <translation>{n} chave</translation>
    </message>
    <message>
        <source>{n} keys</source>
        <translation>{n} chaves</translation>
    </message>
    <message>
        <source>{name}: {n} row gives zero weight to {keys} the mask allows, which {reference} weighs</source>
        <translation>{name}: {n} linha dá peso zero a {keys} que a máscara permite e que {reference} pondera</translation>
    </message>
    <message>
        <source>{name}: {n} rows give zero weight to {keys} the mask allows, which {reference} weighs</source>
        <translation>{name}: {n} linhas dão peso zero a {keys} que a máscara permite e que {reference} pondera</translation>
    </message>
    <message>
        <source>{name}: {n} row weighs its keys differently from {reference}, by up to {gap}</source>
        <translation>{name}: {n} linha pondera suas chaves de outro modo que {reference}, com diferença de até {gap}</translation>
    </message>
    <message>
        <source>{name}: {n} rows weigh their keys differently from {reference}, by up to {gap}</source>
        <translation>{name}: {n} linhas ponderam suas chaves de outro modo que {reference}, com diferença de até {gap}</translation>
    </message>
    <message>
        <source>{name}: {n} row has a non-finite output although its weights match {reference}&apos;s: a NaN or Inf in the value vector of a key with zero weight gets through (0 x NaN = NaN)</source>
        <translation>{name}: {n} linha tem saída não finita, embora seus pesos coincidam com os de {reference}: um NaN ou Inf no vetor de valor de uma chave com peso zero passa adiante (0 x NaN = NaN)</translation>
    </message>
    <message>
        <source>{name}: {n} rows have a non-finite output although their weights match {reference}&apos;s: a NaN or Inf in the value vector of a key with zero weight gets through (0 x NaN = NaN)</source>
        <translation>{name}: {n} linhas têm saída não finita, embora seus pesos coincidam com os de {reference}: um NaN ou Inf no vetor de valor de uma chave com peso zero passa adiante (0 x NaN = NaN)</translation>
    </message>
    <message>
        <source>{name}: {n} row has a different output with the same weights, by up to {gap}</source>
        <translation>{name}: {n} linha tem saída diferente com os mesmos pesos, com diferença de até {gap}</translation>
    </message>
    <message>
        <source>{name}: {n} rows have a different output with the same weights, by up to {gap}</source>
        <translation>{name}: {n} linhas têm saída diferente com os mesmos pesos, com diferença de até {gap}</translation>
    </message>
    <message>
        <source>: their scores contain NaN</source>
        <translation>: suas pontuações contêm NaN</translation>
    </message>
    <message>
        <source>: a score overflowed to +inf</source>
        <translation>: uma pontuação estourou para +inf</translation>
    </message>
    <message>
        <source>: every score the softmax sees is -inf, so it divides 0 by 0</source>
        <translation>: toda pontuação que o softmax vê é -inf, então ele divide 0 por 0</translation>
    </message>
</context>
<context>
    <name>LabWorker</name>
    <message>
        <source>out of memory on this computer: use a smaller input</source>
        <extracomment>A lab&apos;s outcome type.</extracomment>
        <translation>memória insuficiente neste computador: use uma entrada menor</translation>
    </message>
    <message>
        <source>unexpected error: {error}</source>
        <translation>erro inesperado: {error}</translation>
    </message>
    <message>
        <source>tanh saturation concerns additive attention: choose the additive scoring function to see it</source>
        <extracomment>Curves cost about the same for every number of keys: samples x keys stays near this. Largest softmax width the curves are drawn for.</extracomment>
        <translation>a saturação da tanh diz respeito à atenção aditiva: escolha a função de pontuação aditiva para vê-la</translation>
    </message>
    <message>
        <source>Close {name} (it stays in the View menu)</source>
        <translation>Fechar {name} (continua no menu Exibir)</translation>
    </message>
    <message>
        <source>Close {name} (it stays in the Tools menu)</source>
        <translation>Fechar {name} (continua no menu Ferramentas)</translation>
    </message>
    <message>
        <source>Undock into its own window, or dock it back</source>
        <extracomment>Emitted with the view once it has been built.</extracomment>
        <translation>Desacoplar em uma janela própria, ou acoplar de volta</translation>
    </message>
    <message>
        <source>Back into the main window</source>
        <translation>De volta à janela principal</translation>
    </message>
    <message>
        <source>Show this view as a tab of the main window again</source>
        <translation>Mostrar esta vista de novo como uma aba da janela principal</translation>
    </message>
    <message>
        <source>Open in its own window</source>
        <extracomment>What ``Host.add_dock`` gives: a tab of the central area or a dock.</extracomment>
        <translation>Abrir em uma janela própria</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>Fechar</translation>
    </message>
    <message>
        <source>The main view and the views opened from the View and Tools menus; right-click a tab to give it a window of its own</source>
        <translation>A vista principal e as vistas abertas pelos menus Exibir e Ferramentas; clique com o botão direito em uma aba para lhe dar uma janela própria</translation>
    </message>
</context>
<context>
    <name>Lessons</name>
    <message>
        <source>Show the answer</source>
        <translation>Ver a resposta</translation>
    </message>
    <message>
        <source>Reveal (or hide again) the explanation</source>
        <extracomment>What the panel holds changed (another lesson, the answer shown or hidden): a slide fits the panel to it again. The settings the lesson asks about, on a slide (None: it asks about none). On a slide a long answer is shown a page at a time, each page what the panel holds (Page Down shows the next; never a scroll bar): the text of each page.</extracomment>
        <translation>Revela (ou esconde de novo) a explicação</translation>
    </message>
    <message>
        <source>Try it</source>
        <extracomment>Where an answer may be cut into slide pages: after a sentence&apos;s full stop, question or exclamation mark (or colon), before the next word.</extracomment>
        <translation>Experimente</translation>
    </message>
    <message>
        <source>The settings the question asks about (the same as the settings panel&apos;s)</source>
        <translation>As configurações de que a pergunta trata (as mesmas do painel de configurações)</translation>
    </message>
    <message>
        <source>Open the masking lab</source>
        <translation>Laboratório de máscaras</translation>
    </message>
    <message>
        <source>See this input under every masking convention, with the differences outlined</source>
        <translation>Veja esta entrada sob todas as convenções de máscara, com as diferenças contornadas</translation>
    </message>
    <message>
        <source>No lesson chosen</source>
        <translation>Nenhuma lição escolhida</translation>
    </message>
    <message>
        <source>Pick one under Presets › Pitfalls or Presets › Exercises.</source>
        <translation>Escolha uma em Predefinições › Armadilhas ou Predefinições › Exercícios.</translation>
    </message>
    <message>
        <source>Pitfall</source>
        <translation>Armadilha</translation>
    </message>
    <message>
        <source>Exercise</source>
        <translation>Exercício</translation>
    </message>
    <message>
        <source>Answer ({page}/{pages}).</source>
        <translation>Resposta ({page}/{pages}).</translation>
    </message>
    <message>
        <source>Answer.</source>
        <translation>Resposta.</translation>
    </message>
    <message>
        <source>Hide the answer</source>
        <translation>Ocultar a resposta</translation>
    </message>
    <message>
        <source>Lesson</source>
        <translation>Lição</translation>
    </message>
    <message>
        <source>&amp;Lesson</source>
        <translation>&amp;Lição</translation>
    </message>
    <message>
        <source>The question of the lesson loaded from Presets › Pitfalls or Exercises</source>
        <translation>A pergunta da lição carregada de Predefinições › Armadilhas ou Exercícios</translation>
    </message>
    <message>
        <source>Pitfalls</source>
        <translation>Armadilhas</translation>
    </message>
    <message>
        <source>Exercises</source>
        <translation>Exercícios</translation>
    </message>
    <message>
        <source>Lesson: {title}</source>
        <translation>Lição: {title}</translation>
    </message>
    <message>
        <source>Lesson loaded: {title} (Ctrl+Z goes back)</source>
        <translation>Lição carregada: {title} (Ctrl+Z volta)</translation>
    </message>
    <message>
        <source>The masking lab is not part of this window</source>
        <translation>O laboratório de máscaras não faz parte desta janela</translation>
    </message>
</context>
<context>
    <name>LongView</name>
    <message>
        <source>the long-context overview computes dot-product attention; the scoring is {scoring}</source>
        <extracomment>numpy copies for drawing: (rows, cols) mean, max, masked share; per key sums; per row entropy.</extracomment>
        <translation>a visão geral de contexto longo calcula a atenção por produto escalar; a pontuação é {scoring}</translation>
    </message>
    <message>
        <source>queries and keys must have the same size for a dot product: {d_q} and {d_k}</source>
        <translation>consultas e chaves devem ter o mesmo tamanho para um produto escalar: {d_q} e {d_k}</translation>
    </message>
    <message>
        <source>Mean weight per bin</source>
        <extracomment>The overview&apos;s display bins at most (about the pixels a map has on a large screen). The exact tile&apos;s side, in cells, by default: large enough to read tokens and values. Tick labels of bins and lines have room for this many digits from the start. What the overview map shows: name -&gt; label.</extracomment>
        <translation>Peso médio por caixa</translation>
    </message>
    <message>
        <source>Largest weight per bin</source>
        <translation>Maior peso por caixa</translation>
    </message>
    <message>
        <source>Share of masked cells</source>
        <translation>Fração de células mascaradas</translation>
    </message>
    <message>
        <source>S&amp;how</source>
        <translation>&amp;Mostrar</translation>
    </message>
    <message>
        <source>E&amp;xact tile</source>
        <translation>Recorte e&amp;xato</translation>
    </message>
    <message>
        <source>Side of the exact region computed around a clicked bin, in cells</source>
        <translation>Lado da região exata calculada em torno de uma caixa clicada, em células</translation>
    </message>
    <message>
        <source>Keys (first of each bin)</source>
        <extracomment>The overview&apos;s maps made ready for drawing on the compute thread, per statistic shown.</extracomment>
        <translation>Chaves (a primeira de cada caixa)</translation>
    </message>
    <message>
        <source>Queries (first of each bin)</source>
        <translation>Consultas (a primeira de cada caixa)</translation>
    </message>
    <message>
        <source>Every weight of the head, in bins; click a bin for its exact values</source>
        <translation>Todos os pesos da cabeça, agrupados em caixas; clique em uma caixa para ver seus valores exatos</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>Chaves</translation>
    </message>
    <message>
        <source>Queries</source>
        <translation>Consultas</translation>
    </message>
    <message>
        <source>Weights of the chosen query, every key</source>
        <translation>Pesos da consulta escolhida, todas as chaves</translation>
    </message>
    <message>
        <source>Attention each key receives</source>
        <translation>Atenção que cada chave recebe</translation>
    </message>
    <message>
        <source>Entropy of each query (nats)</source>
        <translation>Entropia de cada consulta (nats)</translation>
    </message>
    <message>
        <source>queries {q0}–{q1}, keys {k0}–{k1}</source>
        <translation>consultas {q0}–{q1}, chaves {k0}–{k1}</translation>
    </message>
    <message>
        <source>mean weight {value}</source>
        <translation>peso médio {value}</translation>
    </message>
    <message>
        <source>largest weight {value}</source>
        <translation>maior peso {value}</translation>
    </message>
    <message>
        <source>masked {share:.0%}</source>
        <translation>células mascaradas {share:.0%}</translation>
    </message>
    <message>
        <source>click for the exact values</source>
        <translation>clique para ver os valores exatos</translation>
    </message>
    <message>
        <source>Exact values: click a bin</source>
        <translation>Valores exatos: clique em uma caixa</translation>
    </message>
    <message>
        <source>Exact: queries {q0}–{q1}, keys {k0}–{k1}</source>
        <translation>Exato: consultas {q0}–{q1}, chaves {k0}–{k1}</translation>
    </message>
    <message>
        <source>Weights of query {q} {token}, every key</source>
        <translation>Pesos da consulta {q} {token}, todas as chaves</translation>
    </message>
    <message>
        <source>query {r}, key {c}</source>
        <translation>consulta {r}, chave {c}</translation>
    </message>
    <message>
        <source>weight {value}</source>
        <translation>peso {value}</translation>
    </message>
    <message>
        <source>(masked)</source>
        <translation>(mascarada)</translation>
    </message>
    <message>
        <source>{q} queries x {k} keys: computing the overview…</source>
        <translation>{q} consultas x {k} chaves: calculando a visão geral…</translation>
    </message>
    <message>
        <source>{q} x {k}, batch {b}: {bins_r} x {bins_c} bins in {seconds:.2f} s, {share:.0%} of the cells computed (the rest are masked blocks)</source>
        <translation>{q} x {k}, lote {b}: {bins_r} x {bins_c} caixas em {seconds:.2f} s, {share:.0%} das células calculadas (o resto são blocos mascarados)</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>scoring function</source>
        <translation>função de pontuação</translation>
    </message>
    <message>
        <source>valid lengths</source>
        <translation>comprimentos válidos</translation>
    </message>
    <message>
        <source>mask mode</source>
        <translation>modo de máscara</translation>
    </message>
    <message>
        <source>causal mask</source>
        <translation>máscara causal</translation>
    </message>
    <message>
        <source>device</source>
        <translation>dispositivo</translation>
    </message>
    <message>
        <source>dtype</source>
        <translation>dtype</translation>
    </message>
    <message>
        <source>dropout</source>
        <translation>dropout</translation>
    </message>
    <message>
        <source>training mode</source>
        <translation>modo de treinamento</translation>
    </message>
    <message>
        <source>dropout seed</source>
        <translation>semente do dropout</translation>
    </message>
    <message>
        <source>NaN and infinite inputs</source>
        <translation>entradas NaN e infinitas</translation>
    </message>
    <message>
        <source>scale</source>
        <translation>escala</translation>
    </message>
    <message>
        <source>hidden size</source>
        <translation>tamanho oculto</translation>
    </message>
    <message>
        <source>parameter seed</source>
        <translation>semente dos parâmetros</translation>
    </message>
    <message>
        <source>sliding window</source>
        <translation>janela deslizante</translation>
    </message>
    <message>
        <source>attention sinks</source>
        <translation>sumidouros de atenção</translation>
    </message>
    <message>
        <source>prefix</source>
        <translation>prefixo</translation>
    </message>
    <message>
        <source>chunk size</source>
        <translation>tamanho do bloco</translation>
    </message>
    <message>
        <source>queries</source>
        <translation>consultas</translation>
    </message>
    <message>
        <source>keys</source>
        <translation>chaves</translation>
    </message>
    <message>
        <source>values</source>
        <translation>valores</translation>
    </message>
    <message>
        <source>random numbers</source>
        <extracomment>Which panel shows an error about which field. Names of the fills in undo texts (&quot;Fill keys with zeros&quot;); the settings&apos; and the inputs&apos; names are declared with them (``attnviz.state.settings``, ``catalog.ROLES``).</extracomment>
        <translation>números aleatórios</translation>
    </message>
    <message>
        <source>zeros</source>
        <translation>zeros</translation>
    </message>
    <message>
        <source>ones</source>
        <translation>uns</translation>
    </message>
    <message>
        <source>the book&apos;s arange values</source>
        <translation>os valores arange do livro</translation>
    </message>
    <message>
        <source>Presentation mode — F5 or Esc to leave</source>
        <extracomment>The main view&apos;s entry in the presenter bar&apos;s list of views.</extracomment>
        <translation>Modo de apresentação — F5 ou Esc para sair</translation>
    </message>
    <message>
        <source>Attention</source>
        <translation>Atenção</translation>
    </message>
    <message>
        <source>Enlarge presentation mode&apos;s text further, for the back row</source>
        <translation>Aumenta ainda mais o texto do modo de apresentação, para a última fila</translation>
    </message>
    <message>
        <source>Make presentation mode&apos;s text smaller, for more on a slide</source>
        <translation>Diminui o texto do modo de apresentação, para caber mais num slide</translation>
    </message>
    <message>
        <source>Presentation mode&apos;s text back at its own size</source>
        <translation>O texto do modo de apresentação de volta ao seu tamanho</translation>
    </message>
    <message>
        <source>Whether the pictures show the current inputs</source>
        <translation>Se as imagens mostram as entradas atuais</translation>
    </message>
    <message>
        <source>Device and dtype of the last result</source>
        <translation>Dispositivo e dtype do último resultado</translation>
    </message>
    <message>
        <source>Compute time of the last result (engine only)</source>
        <translation>Tempo de cálculo do último resultado (só o motor)</translation>
    </message>
    <message>
        <source>Computing…</source>
        <translation>Calculando…</translation>
    </message>
    <message>
        <source>Run on CPU</source>
        <translation>Executar na CPU</translation>
    </message>
    <message>
        <source>The device failed (missing or out of memory): compute on the CPU instead</source>
        <translation>O dispositivo falhou (ausente ou sem memória): calcular na CPU</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <extracomment>The menus a host has, in menu-bar order, with their titles.</extracomment>
        <translation>&amp;Arquivo</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>Sai&amp;r</translation>
    </message>
    <message>
        <source>Close attnviz</source>
        <translation>Fecha o attnviz</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>&amp;Editar</translation>
    </message>
    <message>
        <source>&amp;Undo</source>
        <translation>&amp;Desfazer</translation>
    </message>
    <message>
        <source>&amp;Redo</source>
        <translation>&amp;Refazer</translation>
    </message>
    <message>
        <source>&amp;Copy</source>
        <translation>C&amp;opiar</translation>
    </message>
    <message>
        <source>Copy the selected cells of the current table as tab-separated text</source>
        <translation>Copiar as células selecionadas da tabela atual como texto separado por tabulações</translation>
    </message>
    <message>
        <source>&amp;Paste</source>
        <translation>Co&amp;lar</translation>
    </message>
    <message>
        <source>Paste a block of numbers into the current table as one edit</source>
        <translation>Colar um bloco de números na tabela atual como uma única edição</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>E&amp;xibir</translation>
    </message>
    <message>
        <source>&amp;Presentation mode</source>
        <translation>Modo de &amp;apresentação</translation>
    </message>
    <message>
        <source>For a lecture hall: large fonts and cells, editing chrome hidden, still live (F5 or Esc to leave)</source>
        <translation>Para um auditório: fontes e células grandes, controles de edição ocultos, ainda ao vivo (F5 ou Esc para sair)</translation>
    </message>
    <message>
        <source>&amp;Theme</source>
        <translation>&amp;Tema</translation>
    </message>
    <message>
        <source>Follow the &amp;system</source>
        <translation>Seguir o &amp;sistema</translation>
    </message>
    <message>
        <source>Light or dark as the desktop is</source>
        <translation>Claro ou escuro, como o da área de trabalho</translation>
    </message>
    <message>
        <source>&amp;Light</source>
        <translation>&amp;Claro</translation>
    </message>
    <message>
        <source>Light theme (good on a projector in a bright room)</source>
        <translation>Tema claro (bom em um projetor numa sala iluminada)</translation>
    </message>
    <message>
        <source>&amp;Dark</source>
        <translation>&amp;Escuro</translation>
    </message>
    <message>
        <source>Dark theme</source>
        <translation>Tema escuro</translation>
    </message>
    <message>
        <source>&amp;Presets</source>
        <translation>&amp;Predefinições</translation>
    </message>
    <message>
        <source>&amp;Tools</source>
        <translation>&amp;Ferramentas</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>Aj&amp;uda</translation>
    </message>
    <message>
        <source>Inputs, settings and attention weights</source>
        <translation>Entradas, configurações e pesos de atenção</translation>
    </message>
    <message>
        <source>&amp;About attnviz</source>
        <translation>&amp;Sobre o attnviz</translation>
    </message>
    <message>
        <source>About attnviz</source>
        <translation>Sobre o attnviz</translation>
    </message>
    <message>
        <source>&lt;p&gt;See and debug attention: edit queries, keys, values and masks and watch every stage of the computation change.&lt;/p&gt;&lt;p&gt;Built on the chapter “Attention Scoring Functions” of &lt;i&gt;Dive into Deep Learning&lt;/i&gt;.&lt;/p&gt;</source>
        <translation>&lt;p&gt;Veja e depure a atenção: edite consultas, chaves, valores e máscaras e observe cada etapa do cálculo mudar.&lt;/p&gt;&lt;p&gt;Construído sobre o capítulo “Funções de Pontuação de Atenção” de &lt;i&gt;Dive into Deep Learning&lt;/i&gt; (&lt;i&gt;Mergulho no Aprendizado Profundo&lt;/i&gt;).&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>&amp;Idioma</translation>
    </message>
    <message>
        <source>The language of the desktop (Portuguese for any Portuguese locale, otherwise English)</source>
        <translation>O idioma da área de trabalho (português para qualquer localidade em português, senão inglês)</translation>
    </message>
    <message>
        <source>Load preset {title}</source>
        <extracomment>A replaced result is freed this long after the new one arrived: time for its paint. How the colour scale of the attention weights is chosen: &quot;batch&quot; (0 to the largest weight of the batch, shared by its maps), &quot;map&quot; (0 to each map&apos;s largest), &quot;unit&quot; (0 to 1) or &quot;log&quot; (logarithmic, down to the smallest weight shown). Weights of 512 keys are all near 1/512: on a 0-1 scale they would all be the colour of 0. Undos and redos closer together than this are one burst, computed once when it ends: longer than a held key&apos;s auto-repeat (25-33 per second), too short to notice after a single Ctrl+Z. Undo texts of edits that bring inputs from elsewhere (not an edit of the example on show). The call (layer) and head on show (the focus): here only, not in the document; the compute thread gets it with each snapshot (0, 0 for the book&apos;s one head). The range of presentation mode&apos;s further text zoom (Ctrl+= / Ctrl+-). Presentation mode&apos;s text scaled further (Ctrl+= / Ctrl+-): ``text_zoom``. The example on show changed (``loaded_example``: a preset or lesson name, or None). The inputs on show were edited since their example was loaded, or are as loaded again (``example_edited``). The example the session started on (None: inputs given as a document). The main compute thread: the main outcome, then the views&apos; computations that run with it. Every view&apos;s registered computation (``register``). True while the selection an edit moved goes out: its ``documentChanged`` follows (a listener that shows everything then need not on the selection too). Outcomes that arrived after the document or the head on show had moved on (for tests and the benchmark). When the last snapshot went to the scheduler (the benchmark measures from it). How the weight maps&apos; colour scale is chosen (``COLOR_RANGES``). How much further than presentation mode&apos;s own size its text is scaled (1: as designed).</extracomment>
        <translation>Carregar a predefinição {title}</translation>
    </message>
    <message>
        <source>Change shape</source>
        <translation>Alterar formatos</translation>
    </message>
    <message>
        <source>Change {names}</source>
        <translation>Alterar {names}</translation>
    </message>
    <message>
        <source>Fill {role} with {kind}</source>
        <translation>Preencher {role} com {kind}</translation>
    </message>
    <message>
        <source> — choose the CPU under Device to run there.</source>
        <translation> — escolha a CPU em Dispositivo para executar lá.</translation>
    </message>
    <message>
        <source> (showing the last good result)</source>
        <translation> (mostrando o último resultado válido)</translation>
    </message>
    <message>
        <source>computing…</source>
        <translation>calculando…</translation>
    </message>
    <message>
        <source>Larger te&amp;xt (presentation mode)</source>
        <extracomment>The views a lesson stays beside in presentation mode (with the main view). How much presentation mode enlarges the application font (heatmaps: PRESENTATION_SCALE): 9 pt becomes 19.8 pt, whose capitals are 20 px high at 96 dpi (at 1.6 they were 14 px, half a slide&apos;s usual minimum: the back row could not read them; issue 37). The least height of a capital on a slide, in pixels, before the text zoom: a font whose capitals are smaller for their point size than the default&apos;s is enlarged further to reach it. The lesson panel&apos;s share of a slide&apos;s width: its two buttons side by side and an answer that fits under its title at 1280x720 (at 0.32 they wrapped, and a Portuguese answer ran below). The most of a slide&apos;s width the lesson panel widens to for a question that would otherwise run below the screen; the maps beside it keep the rest. A revealed answer longer than the panel holds is shown a page at a time (``LessonView.paginate``): at slide size (capitals of 20 px) a long answer widened the panel to 62% and the maps beside it were cut. What a map takes of its width besides its cells on a slide: the queries&apos; axis and its name, the colour bar and its labels. One step of Ctrl+= / Ctrl+- (presentation mode&apos;s text zoom).</extracomment>
        <translation>Te&amp;xto maior (modo de apresentação)</translation>
    </message>
    <message>
        <source>Smaller t&amp;ext (presentation mode)</source>
        <translation>Texto me&amp;nor (modo de apresentação)</translation>
    </message>
    <message>
        <source>Text at presentation si&amp;ze</source>
        <translation>Texto no tamanho da apre&amp;sentação</translation>
    </message>
    <message>
        <source>loading PyTorch…</source>
        <translation>carregando o PyTorch…</translation>
    </message>
    <message>
        <source>error: showing the last good result</source>
        <translation>erro: mostrando o último resultado válido</translation>
    </message>
    <message>
        <source>up to date</source>
        <translation>atualizado</translation>
    </message>
    <message>
        <source>Text at {percent}% of presentation mode&apos;s size</source>
        <translation>Texto a {percent}% do tamanho do modo de apresentação</translation>
    </message>
    <message>
        <source>The translation for {language} could not be loaded</source>
        <translation>Não foi possível carregar a tradução para {language}</translation>
    </message>
    <message>
        <source>Show the given tensors</source>
        <translation>Mostrar os tensores dados</translation>
    </message>
</context>
<context>
    <name>MaskModes</name>
    <message>
        <source>Book (-1e6 fill)</source>
        <translation>Livro (preenchimento -1e6)</translation>
    </message>
    <message>
        <source>Masked scores are replaced by -1e6 before the softmax, as in the book&apos;s masked_softmax. A row with no valid key gets uniform weights over all keys, padding included.</source>
        <translation>As pontuações mascaradas são substituídas por -1e6 antes do softmax, como no masked_softmax do livro. Uma linha sem chave válida recebe pesos uniformes sobre todas as chaves, padding incluído.</translation>
    </message>
    <message>
        <source>Strict</source>
        <translation>Estrito</translation>
    </message>
    <message>
        <source>Masked keys are excluded exactly. A row with no valid key gets zero weights and a zero output and is flagged; never NaN, and padded keys and values cannot leak in.</source>
        <translation>As chaves mascaradas são excluídas exatamente. Uma linha sem chave válida recebe pesos zero e saída zero e é sinalizada; nunca NaN, e chaves e valores de padding não vazam.</translation>
    </message>
    <message>
        <source>-inf fill</source>
        <translation>Preenchimento -inf</translation>
    </message>
    <message>
        <source>PyTorch SDPA (bool mask)</source>
        <translation>SDPA do PyTorch (máscara booleana)</translation>
    </message>
    <message>
        <source>1/0 mask as float (bug)</source>
        <translation>Máscara 1/0 como float (bug)</translation>
    </message>
    <message>
        <source>Masked scores become -inf (an additive float mask of 0 and -inf does the same) and a plain softmax follows: a row with no valid key becomes NaN.</source>
        <translation>As pontuações mascaradas viram -inf (uma máscara float aditiva de 0 e -inf faz o mesmo) e segue um softmax comum: uma linha sem chave válida vira NaN.</translation>
    </message>
    <message>
        <source>What torch.nn.functional.scaled_dot_product_attention does with a boolean attn_mask (True = attend): masked scores become -inf, and a row with no valid key gets zero weights (PyTorch &gt;= 2.5).</source>
        <translation>O que torch.nn.functional.scaled_dot_product_attention faz com uma attn_mask booleana (True = prestar atenção): as pontuações mascaradas viram -inf, e uma linha sem chave válida recebe pesos zero (PyTorch &gt;= 2.5).</translation>
    </message>
    <message>
        <source>A 1 = keep / 0 = drop mask handed to an API that expects an additive float mask: it adds 1 to kept scores and 0 to dropped ones, so nothing is masked at all.</source>
        <translation>Uma máscara 1 = manter / 0 = descartar entregue a uma API que espera uma máscara float aditiva: ela soma 1 às pontuações mantidas e 0 às descartadas, então nada é mascarado.</translation>
    </message>
    <message>
        <source>Wrong polarity (bug)</source>
        <translation>Polaridade invertida (bug)</translation>
    </message>
    <message>
        <source>A True = attend mask handed to an API where True = ignore (such as nn.MultiheadAttention&apos;s key_padding_mask): the padding is attended and the real keys are hidden; rows whose every key is then hidden become NaN.</source>
        <translation>Uma máscara True = prestar atenção entregue a uma API em que True = ignorar (como a key_padding_mask de nn.MultiheadAttention): o padding recebe atenção e as chaves reais ficam escondidas; as linhas em que todas as chaves ficam escondidas viram NaN.</translation>
    </message>
</context>
<context>
    <name>MaskingLab</name>
    <message>
        <source>nan row</source>
        <extracomment>The engine&apos;s row classes (``engine.lab.ROW_KINDS``) as the hover text names them.</extracomment>
        <translation>linha NaN</translation>
    </message>
    <message>
        <source>zero row</source>
        <translation>linha zero</translation>
    </message>
    <message>
        <source>uniform over padding</source>
        <translation>uniforme sobre o padding</translation>
    </message>
    <message>
        <source>future visible</source>
        <translation>futuro visível</translation>
    </message>
    <message>
        <source>padding attended</source>
        <translation>padding com atenção</translation>
    </message>
    <message>
        <source>keys hidden</source>
        <translation>chaves escondidas</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>ok</translation>
    </message>
    <message>
        <source>Keys</source>
        <extracomment>Red of the disagreement outline: the same family as the empty-row marker, so red always means &quot;look here&quot;, but as an outline (or a tint) rather than a filled bar. Up to this many cells per side disagreeing cells are outlined; beyond, they are tinted. A convention&apos;s map is at least this wide (plus its colour bar): the grid&apos;s column width. A convention&apos;s map is at least this high (on a slide too: in slide type, six maps on one 1280x720 slide were 49-57 px high, so a slide shows them a page at a time). The maps of one slide page, in one row: three conventions, or two with both causal alignments each (Page Down shows the next page: ``SlidePages``). On a slide a map is at least this wide (a 4-key map, its axis and its bar): beside a lesson&apos;s panel a page holds fewer maps (three in one row scrolled sideways there). On a slide narrower than this (a lesson&apos;s panel beside the lab) the header&apos;s legend is brief. The place of each mask mode in the lab after the reference, the same on every input: the bugs first, then the libraries&apos; conventions. The axes of every convention&apos;s map.</extracomment>
        <translation>Chaves</translation>
    </message>
    <message>
        <source>Queries</source>
        <translation>Consultas</translation>
    </message>
    <message>
        <source>(reference)</source>
        <translation>(referência)</translation>
    </message>
    <message>
        <source>{name}: batch {b}, query {r}, key {c}</source>
        <translation>{name}: lote {b}, consulta {r}, chave {c}</translation>
    </message>
    <message>
        <source>(masked)</source>
        <translation>(mascarada)</translation>
    </message>
    <message>
        <source>weight {value}</source>
        <translation>peso {value}</translation>
    </message>
    <message>
        <source>{name} gives {value}</source>
        <translation>{name} dá {value}</translation>
    </message>
    <message>
        <source>differs</source>
        <translation>difere</translation>
    </message>
    <message>
        <source>row: {kind}</source>
        <translation>linha: {kind}</translation>
    </message>
    <message>
        <source>the reference</source>
        <translation>a referência</translation>
    </message>
    <message>
        <source>same as {name}</source>
        <translation>igual a {name}</translation>
    </message>
    <message>
        <source>1 weight</source>
        <translation>1 peso</translation>
    </message>
    <message>
        <source>{n} weights</source>
        <translation>{n} pesos</translation>
    </message>
    <message>
        <source>1 output</source>
        <translation>1 saída</translation>
    </message>
    <message>
        <source>{n} outputs</source>
        <translation>{n} saídas</translation>
    </message>
    <message>
        <source>{weights} and {outputs} differ</source>
        <translation>{weights} e {outputs} diferem</translation>
    </message>
    <message>
        <source>{what} differs</source>
        <translation>{what} difere</translation>
    </message>
    <message>
        <source>{what} differ</source>
        <translation>{what} diferem</translation>
    </message>
    <message>
        <source>Ba&amp;tch element</source>
        <extracomment>On a slide the maps a page at a time (Page Down walks them; off a slide one page).</extracomment>
        <translation>Elemen&amp;to do lote</translation>
    </message>
    <message>
        <source>Which batch element the maps show (the same as in the main window)</source>
        <translation>Qual elemento do lote os mapas mostram (o mesmo da janela principal)</translation>
    </message>
    <message>
        <source>What each convention does differently from the reference, counted over every batch element</source>
        <translation>O que cada convenção faz de diferente da referência, contado sobre todos os elementos do lote</translation>
    </message>
    <message>
        <source>Showing batch element {b} of {n}.</source>
        <translation>Mostrando o elemento {b} de {n} do lote.</translation>
    </message>
    <message>
        <source>Showing batch element {b}.</source>
        <translation>Mostrando o elemento {b} do lote.</translation>
    </message>
    <message>
        <source>The current input under every masking convention; red outlines mark weights that differ from the reference</source>
        <translation>A entrada atual sob todas as convenções de máscara; contornos vermelhos marcam pesos que diferem da referência</translation>
    </message>
    <message>
        <source>The current input under every masking convention, as each library or bug would compute it.</source>
        <translation>A entrada atual sob todas as convenções de máscara, como cada biblioteca ou bug a calcularia.</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#d01414&apos;&gt;&lt;b&gt;Red outline&lt;/b&gt;&lt;/span&gt;: the weight differs from &lt;b&gt;{reference}&lt;/b&gt;. Grey hatch: masked; light stripes: masked &lt;i&gt;but given weight&lt;/i&gt;. Red bar on the left: the query has no valid key; on the right: its output differs.</source>
        <translation>&lt;span style=&apos;color:#d01414&apos;&gt;&lt;b&gt;Contorno vermelho&lt;/b&gt;&lt;/span&gt;: o peso difere de &lt;b&gt;{reference}&lt;/b&gt;. Hachura cinza: mascarada; listras claras: mascarada &lt;i&gt;mas com peso&lt;/i&gt;. Barra vermelha à esquerda: a consulta não tem chave válida; à direita: sua saída difere.</translation>
    </message>
    <message>
        <source>Maps {first}–{last} of {n}</source>
        <translation>Mapas {first}–{last} de {n}</translation>
    </message>
    <message>
        <source>batch element {b} of {n}</source>
        <translation>elemento do lote {b} de {n}</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#d01414&apos;&gt;&lt;b&gt;Red outline&lt;/b&gt;&lt;/span&gt;: differs from &lt;b&gt;{reference}&lt;/b&gt;. Hatch: masked; light stripes: masked &lt;i&gt;but given weight&lt;/i&gt;. Red bar: no valid key (left), output differs (right).</source>
        <translation>&lt;span style=&apos;color:#d01414&apos;&gt;&lt;b&gt;Contorno vermelho&lt;/b&gt;&lt;/span&gt;: difere de &lt;b&gt;{reference}&lt;/b&gt;. Hachura: mascarada; listras claras: mascarada &lt;i&gt;mas com peso&lt;/i&gt;. Barra vermelha: sem chave válida (à esquerda), saída difere (à direita).</translation>
    </message>
    <message>
        <source>&lt;span style=&apos;color:#d01414&apos;&gt;&lt;b&gt;Red outline&lt;/b&gt;&lt;/span&gt;: differs from &lt;b&gt;{reference}&lt;/b&gt;.</source>
        <translation>&lt;span style=&apos;color:#d01414&apos;&gt;&lt;b&gt;Contorno vermelho&lt;/b&gt;&lt;/span&gt;: difere de &lt;b&gt;{reference}&lt;/b&gt;.</translation>
    </message>
    <message>
        <source>&lt;b&gt;Same weights and outputs as {reference}&lt;/b&gt; here: {names}.</source>
        <translation>&lt;b&gt;Mesmos pesos e saídas que {reference}&lt;/b&gt; aqui: {names}.</translation>
    </message>
    <message>
        <source>&lt;b&gt;Every convention gives {reference}&apos;s weights and outputs on this input&lt;/b&gt; (over all batch elements). Try a valid length of 0, or a pitfall from Presets.</source>
        <translation>&lt;b&gt;Todas as convenções dão os pesos e as saídas de {reference} nesta entrada&lt;/b&gt; (em todos os elementos do lote). Experimente um comprimento válido 0, ou uma armadilha das Predefinições.</translation>
    </message>
    <message>
        <source>&lt;b&gt;What differs from {reference}&lt;/b&gt; (all batch elements):</source>
        <translation>&lt;b&gt;O que difere de {reference}&lt;/b&gt; (todos os elementos do lote):</translation>
    </message>
    <message>
        <source>(showing the last good result)</source>
        <translation>(mostrando o último resultado válido)</translation>
    </message>
    <message>
        <source>computing every convention…</source>
        <translation>calculando todas as convenções…</translation>
    </message>
    <message>
        <source>Masking lab: every convention</source>
        <translation>Laboratório de máscaras: todas as convenções</translation>
    </message>
    <message>
        <source>&amp;Masking lab</source>
        <translation>Laboratório de &amp;máscaras</translation>
    </message>
    <message>
        <source>The current input under every masking convention (book, strict, -inf, SDPA and common bugs), with the weights that differ outlined and explained</source>
        <translation>A entrada atual sob todas as convenções de máscara (livro, estrita, -inf, SDPA e bugs comuns), com os pesos que diferem contornados e explicados</translation>
    </message>
</context>
<context>
    <name>Merge</name>
    <message>
        <source>cannot merge the ranks: {problem}</source>
        <translation>não é possível combinar os ranks: {problem}</translation>
    </message>
    <message>
        <source>give the capture of every rank (at least two)</source>
        <translation>dê a captura de cada rank (pelo menos duas)</translation>
    </message>
    <message>
        <source>capture {index} names no rank (it was not recorded under torch.distributed)</source>
        <translation>a captura {index} não indica rank (não foi registrada sob torch.distributed)</translation>
    </message>
    <message>
        <source>the captures come from worlds of {sizes} ranks</source>
        <translation>as capturas vêm de mundos de {sizes} ranks</translation>
    </message>
    <message>
        <source>the captures claim a world of more than {most} ranks</source>
        <translation>as capturas declaram um mundo de mais de {most} ranks</translation>
    </message>
    <message>
        <source>the ranks given are {ranks}; a world of {size} needs each of 0 to {last} once</source>
        <translation>os ranks dados são {ranks}; um mundo de {size} precisa de cada um de 0 a {last} uma vez</translation>
    </message>
    <message>
        <source>the captures do not say what the ranks hold (data or heads), or say different things: pass sharding=&apos;data&apos; or &apos;heads&apos;</source>
        <translation>as capturas não dizem o que os ranks contêm (dados ou cabeças), ou dizem coisas diferentes: passe sharding=&apos;data&apos; ou &apos;heads&apos;</translation>
    </message>
    <message>
        <source>rank {rank} recorded other calls than rank 0: its call {index} is {theirs}, rank 0&apos;s {ours}</source>
        <translation>o rank {rank} gravou outras chamadas que o rank 0: a chamada {index} dele é {theirs}, a do rank 0 {ours}</translation>
    </message>
    <message>
        <source>rank {rank} recorded other calls than rank 0 ({count} against {count_0}): rank {who} has {name} more, from call {index}</source>
        <translation>o rank {rank} gravou outras chamadas que o rank 0 ({count} contra {count_0}): o rank {who} tem {name} a mais, a partir da chamada {index}</translation>
    </message>
    <message>
        <source>call &apos;{name}&apos; has shapes {shapes} on the ranks: they differ beyond the {what}</source>
        <translation>a chamada &apos;{name}&apos; tem formas {shapes} nos ranks: elas diferem além de {what}</translation>
    </message>
    <message>
        <source>batch</source>
        <translation>lote</translation>
    </message>
    <message>
        <source>heads</source>
        <translation>cabeças</translation>
    </message>
    <message>
        <source>call &apos;{name}&apos; was recorded differently on the ranks</source>
        <translation>a chamada &apos;{name}&apos; foi registrada de modo diferente nos ranks</translation>
    </message>
    <message>
        <source>call &apos;{name}&apos; is causal on some ranks only</source>
        <translation>a chamada &apos;{name}&apos; é causal só em alguns ranks</translation>
    </message>
    <message>
        <source>call &apos;{name}&apos; has other score terms on the ranks</source>
        <translation>a chamada &apos;{name}&apos; tem outros termos de escore nos ranks</translation>
    </message>
    <message>
        <source>call &apos;{name}&apos; has {what} on some ranks only</source>
        <translation>a chamada &apos;{name}&apos; tem {what} só em alguns ranks</translation>
    </message>
    <message>
        <source>the {what} of call &apos;{name}&apos; do not line up: {error}</source>
        <translation>{what} da chamada &apos;{name}&apos; não se alinham: {error}</translation>
    </message>
    <message>
        <source>the {what} of call &apos;{name}&apos; differs between ranks where it must be shared</source>
        <translation>{what} da chamada &apos;{name}&apos; difere entre ranks onde deve ser compartilhado</translation>
    </message>
</context>
<context>
    <name>Messages</name>
    <message>
        <source>and {n} more</source>
        <extracomment>The longest line ``one_line`` returns, and the longest value it leaves whole.</extracomment>
        <translation>e mais {n}</translation>
    </message>
    <message>
        <source>{start} … ({count} characters left out) … {end}</source>
        <translation>{start} … ({count} caracteres omitidos) … {end}</translation>
    </message>
</context>
<context>
    <name>ModelDocks</name>
    <message>
        <source>Heads: every head of the layer</source>
        <translation>Cabeças: todas as cabeças da camada</translation>
    </message>
    <message>
        <source>&amp;Heads</source>
        <translation>&amp;Cabeças</translation>
    </message>
    <message>
        <source>Every head of the model&apos;s layer on show, side by side with one colour scale</source>
        <translation>Todas as cabeças da camada do modelo em exibição, lado a lado, com uma só escala de cores</translation>
    </message>
    <message>
        <source>Layers × heads: a statistic of every head</source>
        <translation>Camadas × cabeças: uma estatística de cada cabeça</translation>
    </message>
    <message>
        <source>&amp;Layers × heads</source>
        <translation>Ca&amp;madas × cabeças</translation>
    </message>
    <message>
        <source>Every head of every layer at a glance, coloured by a statistic; click one to show it</source>
        <translation>Todas as cabeças de todas as camadas num relance, coloridas por uma estatística; clique em uma para mostrá-la</translation>
    </message>
    <message>
        <source>Tokens: attention sent and received</source>
        <translation>Tokens: atenção enviada e recebida</translation>
    </message>
    <message>
        <source>&amp;Tokens</source>
        <translation>T&amp;okens</translation>
    </message>
    <message>
        <source>Select tokens to see the attention they send and receive, and the keys a query looks at most</source>
        <translation>Selecione tokens para ver a atenção que eles enviam e recebem, e as chaves para as quais uma consulta mais olha</translation>
    </message>
    <message>
        <source>Mask doctor: what is wrong with the masks</source>
        <translation>Médico de máscaras: o que há de errado com as máscaras</translation>
    </message>
    <message>
        <source>Mask &amp;doctor</source>
        <translation>Mé&amp;dico de máscaras</translation>
    </message>
    <message>
        <source>Every problem in the masks the model&apos;s attention calls received, each a click away from its cells</source>
        <translation>Todos os problemas nas máscaras que as chamadas de atenção do modelo receberam, cada um a um clique das suas células</translation>
    </message>
    <message>
        <source>Long context: overview and exact tiles</source>
        <translation>Contexto longo: visão geral e recortes exatos</translation>
    </message>
    <message>
        <source>Lon&amp;g context</source>
        <translation>Contexto lon&amp;go</translation>
    </message>
    <message>
        <source>The whole attention of a long input in bins, never held at once; click for exact values</source>
        <translation>Toda a atenção de uma entrada longa, em caixas, sem nunca guardá-la inteira de uma vez; clique para ver os valores exatos</translation>
    </message>
</context>
<context>
    <name>ModelOverview</name>
    <message>
        <source>call</source>
        <extracomment>The calls table&apos;s columns.</extracomment>
        <translation>chamada</translation>
    </message>
    <message>
        <source>heads</source>
        <translation>cabeças</translation>
    </message>
    <message>
        <source>masks given</source>
        <translation>máscaras passadas</translation>
    </message>
    <message>
        <source>B x Q x K</source>
        <translation>B x Q x K</translation>
    </message>
    <message>
        <source>fidelity</source>
        <translation>fidelidade</translation>
    </message>
    <message>
        <source>note</source>
        <translation>nota</translation>
    </message>
    <message>
        <source>&amp;Statistic</source>
        <translation>&amp;Estatística</translation>
    </message>
    <message>
        <source>What each cell shows about its head</source>
        <translation>O que cada célula mostra sobre a sua cabeça</translation>
    </message>
    <message>
        <source>The model&apos;s attention calls: what each was given, and the largest difference between its own output and attnviz&apos;s recomputation (fidelity); click one to show it</source>
        <translation>As chamadas de atenção do modelo: o que cada uma recebeu, e a maior diferença entre a sua própria saída e o recálculo do attnviz (fidelidade); clique em uma para mostrá-la</translation>
    </message>
    <message>
        <source>Heads</source>
        <translation>Cabeças</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>Camadas</translation>
    </message>
    <message>
        <source>not checked</source>
        <translation>não verificada</translation>
    </message>
    <message>
        <source>weights only</source>
        <translation>só pesos</translation>
    </message>
    <message>
        <source>{statistic}, batch {b} (on show: layer {layer}, head {head})</source>
        <translation>{statistic}, lote {b} (em exibição: camada {layer}, cabeça {head})</translation>
    </message>
    <message>
        <source>One head here: open a file of a model&apos;s tensors with layers and heads, or a capture.</source>
        <translation>Uma só cabeça aqui: abra um arquivo com os tensores de um modelo com camadas e cabeças, ou uma captura.</translation>
    </message>
    <message>
        <source>does not apply</source>
        <translation>não se aplica</translation>
    </message>
    <message>
        <source>{call}, head {h}</source>
        <translation>{call}, cabeça {h}</translation>
    </message>
    <message>
        <source>click to show this head everywhere</source>
        <translation>clique para mostrar esta cabeça em todas as vistas</translation>
    </message>
</context>
<context>
    <name>ModelRun</name>
    <message>
        <source>{call}: queries, keys and values come together (only {given} found)</source>
        <extracomment>The arguments a mask can come through, in the order the engine combines them. Where a run came from; &quot;book&quot;: the book&apos;s 3-D inputs (typed, filled, a preset, a tensor file without heads), one call of one head whose queries and keys may differ in size (additive scoring takes any d_q and d_k; the engine refuses a dot product of different sizes). The values of a causal flag other than off (``MaskArguments.causal``). Where the causal mask lines up when there are fewer queries than keys: &quot;top_left&quot; (SDPA&apos;s is_causal) or &quot;bottom_right&quot; (the last query sees the last key: a KV-cache step, as Hugging Face&apos;s causal masks do). The same whenever L_q = L_k. A FlexAttention block mask&apos;s ``mask_mod(b, h, q_idx, kv_idx)`` (True = attend), combined with the other arguments; a live function, kept while the program runs (a file keeps it as the boolean ``attn_mask`` it evaluates to). The kinds of score term a call records, in the engine&apos;s words (``attnviz.engine.score_terms``): a finite bias added to the scaled scores, tanh soft-capping, a FlexAttention ``score_mod``, ALiBi (one slope per head, the bias slope x (kv_idx - q_idx) computed where it is used).</extracomment>
        <translation>{call}: consultas, chaves e valores vêm juntos (só foi encontrado: {given})</translation>
    </message>
    <message>
        <source>{call}: neither queries, keys and values nor attention weights</source>
        <translation>{call}: nem consultas, chaves e valores, nem pesos de atenção</translation>
    </message>
    <message>
        <source>{call}: {name} have shape {shape}; the call needs ({batch}, {length})</source>
        <translation>{call}: {name} têm forma {shape}; a chamada precisa de ({batch}, {length})</translation>
    </message>
    <message>
        <source>{call}: {name} must be (batch, heads, length, size), got shape {shape}</source>
        <translation>{call}: {name} deve ser (lote, cabeças, comprimento, tamanho), veio o formato {shape}</translation>
    </message>
    <message>
        <source>{call}: the {axis} of queries {q}, keys {k} and values {v} do not fit together</source>
        <translation>{call}: consultas {q}, chaves {k} e valores {v} não batem na dimensão {axis}</translation>
    </message>
    <message>
        <source>a model run needs at least one attention call</source>
        <extracomment>A whole call&apos;s mask_mod called for one head&apos;s slice (``compare.one_head_call``). A call of recorded weights only has no tensors: its head views show zeros of one column (read-only, no memory), so every view can still read the shapes (B, L_q, L_k). The most ranks a run may claim: the largest runs have some 10^5 (a file claiming more is refused before anything counts them: a world size sizes the merge&apos;s checks). The rank&apos;s place when the run was recorded under torch.distributed (None: one process).</extracomment>
        <translation>uma execução de modelo precisa de ao menos uma chamada de atenção</translation>
    </message>
    <message>
        <source>{name} have shape {shape}; the tensors need ({batch}, {length})</source>
        <translation>{name} tem formato {shape}; os tensores precisam de ({batch}, {length})</translation>
    </message>
</context>
<context>
    <name>OpenDialog</name>
    <message>
        <source>&amp;Queries</source>
        <translation>&amp;Consultas</translation>
    </message>
    <message>
        <source>&amp;Keys</source>
        <translation>C&amp;haves</translation>
    </message>
    <message>
        <source>&amp;Values</source>
        <translation>&amp;Valores</translation>
    </message>
    <message>
        <source>Valid &amp;lengths</source>
        <translation>Co&amp;mprimentos válidos</translation>
    </message>
    <message>
        <source>&amp;Mask</source>
        <translation>&amp;Máscara</translation>
    </message>
    <message>
        <source>&amp;Tokens</source>
        <translation>&amp;Tokens</translation>
    </message>
    <message>
        <source>Query tokens</source>
        <translation>Tokens das consultas</translation>
    </message>
    <message>
        <source>Key tokens</source>
        <translation>Tokens das chaves</translation>
    </message>
    <message>
        <source>(keep current)</source>
        <extracomment>The roles the dialog offers, in form order (causal flag and scale are read by name only).</extracomment>
        <translation>(manter a atual)</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>(não usar)</translation>
    </message>
    <message>
        <source>Open {name}</source>
        <translation>Abrir {name}</translation>
    </message>
    <message>
        <source>{name} ({format}) holds {n} array(s). Say which is which; a role left on “keep current” keeps the array you have now.</source>
        <translation>{name} ({format}) contém {n} array(s). Diga qual é qual; um papel deixado em “manter a atual” mantém o array que você tem agora.</translation>
    </message>
    <message>
        <source>Array</source>
        <translation>Array</translation>
    </message>
    <message>
        <source>Shape</source>
        <translation>Formato</translation>
    </message>
    <message>
        <source>The arrays in the file</source>
        <translation>Os arrays do arquivo</translation>
    </message>
    <message>
        <source>Which layer to show first, of (layers, batch, heads, n, d) arrays (every layer is loaded)</source>
        <translation>Qual camada mostrar primeiro, em arrays (camadas, lote, cabeças, n, d) (todas as camadas são carregadas)</translation>
    </message>
    <message>
        <source>La&amp;yer</source>
        <translation>C&amp;amada</translation>
    </message>
    <message>
        <source>Which head to show first, of (batch, heads, n, d) arrays (every head is loaded)</source>
        <translation>Qual cabeça mostrar primeiro, em arrays (lote, cabeças, n, d) (todas as cabeças são carregadas)</translation>
    </message>
    <message>
        <source>(of {n} layers: 0 to {last})</source>
        <translation>(de {n} camadas: 0 a {last})</translation>
    </message>
    <message>
        <source>(none in the chosen arrays)</source>
        <translation>(nenhuma nos arrays escolhidos)</translation>
    </message>
    <message>
        <source>A mask named only &apos;mask&apos;: bool or float is read as SDPA&apos;s attn_mask (True = attend, floats added), whole numbers as Hugging Face&apos;s attention_mask (1 = attend)</source>
        <translation>Uma máscara chamada só &apos;mask&apos;: bool ou float é lida como a attn_mask do SDPA (True = atender, floats somados), números inteiros como a attention_mask do Hugging Face (1 = atender)</translation>
    </message>
    <message>
        <source>As torch&apos;s scaled_dot_product_attention reads it: bool True = attend; floats are added to the scores</source>
        <translation>Como o scaled_dot_product_attention do torch a lê: bool True = atender; floats são somados às pontuações</translation>
    </message>
    <message>
        <source>As nn.MultiheadAttention reads it: (batch, n_keys), True = ignore</source>
        <translation>Como nn.MultiheadAttention a lê: (lote, n_chaves), True = ignorar</translation>
    </message>
    <message>
        <source>As Hugging Face builds it: (batch, n_keys) 0/1, 1 = attend</source>
        <translation>Como o Hugging Face a constrói: (lote, n_chaves) 0/1, 1 = atender</translation>
    </message>
    <message>
        <source>Token labels for both axes: (n,) or (batch, n)</source>
        <translation>Rótulos dos tokens para os dois eixos: (n,) ou (lote, n)</translation>
    </message>
    <message>
        <source>Token labels of the queries</source>
        <translation>Rótulos dos tokens das consultas</translation>
    </message>
    <message>
        <source>Token labels of the keys</source>
        <translation>Rótulos dos tokens das chaves</translation>
    </message>
    <message>
        <source>&amp;Head</source>
        <translation>&amp;Cabeça</translation>
    </message>
    <message>
        <source>What loading with this choice gives, or why it cannot load</source>
        <translation>O que carregar com esta escolha dá, ou por que não é possível carregar</translation>
    </message>
    <message>
        <source>(of {n} heads: 0 to {last})</source>
        <translation>(de {n} cabeças: 0 a {last})</translation>
    </message>
    <message>
        <source>Cannot load:</source>
        <translation>Não é possível carregar:</translation>
    </message>
    <message>
        <source>no valid lengths</source>
        <translation>sem comprimentos válidos</translation>
    </message>
    <message>
        <source>valid lengths per batch element</source>
        <translation>comprimentos válidos por elemento do lote</translation>
    </message>
    <message>
        <source>valid lengths per query</source>
        <translation>comprimentos válidos por consulta</translation>
    </message>
    <message>
        <source>Loads as</source>
        <translation>Carrega como</translation>
    </message>
    <message>
        <source>queries {q}, keys {k}, values {v}, {lengths}.</source>
        <translation>consultas {q}, chaves {k}, valores {v}, {lengths}.</translation>
    </message>
    <message>
        <source>A model of {layers} layer(s) x {heads} head(s); layer {layer}, head {head} shown first.</source>
        <translation>Um modelo de {layers} camada(s) x {heads} cabeça(s); a camada {layer}, cabeça {head}, é mostrada primeiro.</translation>
    </message>
    <message>
        <source>Queries: (batch, n_queries, d_q); (n, d) gets a batch of 1; 4-D needs a head</source>
        <translation>Consultas: (lote, n_consultas, d_q); (n, d) ganha um lote de 1; 4-D precisa de uma cabeça</translation>
    </message>
    <message>
        <source>Keys: (batch, n_keys, d_k)</source>
        <translation>Chaves: (lote, n_chaves, d_k)</translation>
    </message>
    <message>
        <source>Values: (batch, n_keys, d_v), as many rows as the keys</source>
        <translation>Valores: (lote, n_chaves, d_v), tantas linhas quanto as chaves</translation>
    </message>
    <message>
        <source>Valid lengths: (batch,) per batch element or (batch, n_queries) per query</source>
        <translation>Comprimentos válidos: (lote,) por elemento do lote ou (lote, n_consultas) por consulta</translation>
    </message>
</context>
<context>
    <name>PipelineCode</name>
    <message>
        <source>the code cannot be written: {error}</source>
        <extracomment>The setting copy as code remembers its framework in (``ui.files.copy_code``), and its default. The lines computing the stage, and the rest of their function: warm yellows, the stage&apos;s the formulas&apos; highlight (``formulas.HIGHLIGHT_BG``), the function&apos;s paler. Why no snippet could be written (a marked message), when none was.</extracomment>
        <translation>não foi possível escrever o código: {error}</translation>
    </message>
    <message>
        <source>&amp;Code in</source>
        <translation>&amp;Código em</translation>
    </message>
    <message>
        <source>The framework the code is written in (the same choice as Edit › Copy as code)</source>
        <translation>O framework em que o código é escrito (a mesma escolha de Editar › Copiar como código)</translation>
    </message>
    <message>
        <source>The code Copy as code writes for these inputs; the stage&apos;s lines are highlighted</source>
        <translation>O código que Copiar como código escreve para estas entradas; as linhas da etapa ficam destacadas</translation>
    </message>
    <message>
        <source>Writing the code…</source>
        <translation>Escrevendo o código…</translation>
    </message>
    <message>
        <source>Hover a stage, or walk the stages, to see the lines that compute it</source>
        <translation>Passe o mouse sobre uma etapa, ou percorra as etapas, para ver as linhas que a calculam</translation>
    </message>
    <message>
        <source>No line of this {framework} code computes this stage</source>
        <translation>Nenhuma linha deste código {framework} calcula esta etapa</translation>
    </message>
    <message>
        <source>lines {first}–{last} in {function}</source>
        <translation>linhas {first}–{last} de {function}</translation>
    </message>
    <message>
        <source>line {first} in {function}</source>
        <translation>linha {first} de {function}</translation>
    </message>
    <message>
        <source>Computed by {where}</source>
        <translation>Calculada em: {where}</translation>
    </message>
</context>
<context>
    <name>PipelineView</name>
    <message>
        <source>1 · Raw scores a(q, k)</source>
        <extracomment>(stage, title) in pipeline order; the stages are the engine&apos;s ``STAGES``.</extracomment>
        <translation>1 · Pontuações brutas a(q, k)</translation>
    </message>
    <message>
        <source>2 · Scaled scores</source>
        <translation>2 · Pontuações escalonadas</translation>
    </message>
    <message>
        <source>3 · Mask (1 = may attend)</source>
        <translation>3 · Máscara (1 = pode prestar atenção)</translation>
    </message>
    <message>
        <source>4 · Masked scores ã (softmax input)</source>
        <translation>4 · Entrada do softmax ã (mascarada)</translation>
    </message>
    <message>
        <source>5 · Softmax weights α</source>
        <translation>5 · Pesos do softmax α</translation>
    </message>
    <message>
        <source>6 · Weights after dropout</source>
        <translation>6 · Pesos após o dropout</translation>
    </message>
    <message>
        <source>7 · Output ∑ α v</source>
        <translation>7 · Saída ∑ α v</translation>
    </message>
    <message>
        <source>dot</source>
        <extracomment>The scoring functions as notes name them (&quot;scaled dot scoring&quot;).</extracomment>
        <translation>de produto escalar</translation>
    </message>
    <message>
        <source>scaled dot</source>
        <translation>de produto escalar escalonado</translation>
    </message>
    <message>
        <source>additive</source>
        <translation>aditiva</translation>
    </message>
    <message>
        <source>bilinear</source>
        <translation>bilinear</translation>
    </message>
    <message>
        <source>gaussian</source>
        <translation>gaussiana</translation>
    </message>
    <message>
        <source>summation</source>
        <translation>por soma</translation>
    </message>
    <message>
        <source>Value dimension</source>
        <translation>Dimensão do valor</translation>
    </message>
    <message>
        <source>Keys</source>
        <extracomment>The stages drawn as (queries, keys) maps; the output is (queries, value dimension). Each stage map&apos;s axes (marked sources: the view names them in the current language).
----------
``own_map(heatmap, x_label, y_label)``: the view makes the map follow its colour map, type scale and theme, its axes named by the marked sources given.</extracomment>
        <translation>Chaves</translation>
    </message>
    <message>
        <source>Queries</source>
        <translation>Consultas</translation>
    </message>
    <message>
        <source>Waiting for a result…</source>
        <extracomment>Starts and ends the stage-by-stage walk while the pipeline is on show (presentation mode too). What moves the walk while presenting, wherever the focus is: the arrows. The keys clickers send (Page Down / Up) belong to the presenter bar, which gives the walk its steps first (``AppSession.claim_steps``). Below this width the formulas go under the stages instead of beside them. The head the result on show is of (its tensors, lengths and causal flag). Big stage maps, prepared off the GUI thread (latest request wins), drawn when ready. The code of the result on show, written off the GUI thread while the code is on show.</extracomment>
        <translation>Esperando um resultado…</translation>
    </message>
    <message>
        <source>Which batch element the stages show (the same as in the main window)</source>
        <translation>Qual elemento do lote as etapas mostram (o mesmo da janela principal)</translation>
    </message>
    <message>
        <source>&amp;Batch element</source>
        <translation>Elemento do &amp;lote</translation>
    </message>
    <message>
        <source>&amp;Walk the stages</source>
        <translation>&amp;Percorrer as etapas</translation>
    </message>
    <message>
        <source>One stage at a time, enlarged, with its equation and what changed ({shortcut}); ← → or Page Up/Down step through them</source>
        <translation>Uma etapa por vez, ampliada, com sua equação e o que mudou ({shortcut}); ← → ou Page Up/Down avançam e voltam</translation>
    </message>
    <message>
        <source>Show the c&amp;ode</source>
        <translation>Mostrar o c&amp;ódigo</translation>
    </message>
    <message>
        <source>The code that computes each stage, in the framework of Copy as code</source>
        <translation>O código que calcula cada etapa, no framework de Copiar como código</translation>
    </message>
    <message>
        <source>The chapter&apos;s equations; hover a stage to see where it is in them</source>
        <translation>As equações do capítulo; passe o mouse sobre uma etapa para ver onde ela está nelas</translation>
    </message>
    <message>
        <source>Additive attention: hidden features of one query–key pair</source>
        <translation>Atenção aditiva: unidades ocultas de um par consulta–chave</translation>
    </message>
    <message>
        <source>tanh(W_q q + W_k k): the h hidden units whose w_v-weighted sum is the score</source>
        <translation>tanh(W_q q + W_k k): as h unidades ocultas cuja soma ponderada por w_v é a pontuação</translation>
    </message>
    <message>
        <source>Query index i</source>
        <translation>Índice i da consulta</translation>
    </message>
    <message>
        <source>Key index j</source>
        <translation>Índice j da chave</translation>
    </message>
    <message>
        <source>&amp;Query i</source>
        <translation>&amp;Consulta i</translation>
    </message>
    <message>
        <source>&amp;Key j</source>
        <translation>C&amp;have j</translation>
    </message>
    <message>
        <source>hidden unit</source>
        <translation>unidade oculta</translation>
    </message>
    <message>
        <source>Learned parameters (edit a cell: the scores follow; Ctrl+Z undoes)</source>
        <extracomment>In the order the formula reads them (W_q, W_k, w_v), whatever order they came in.</extracomment>
        <translation>Parâmetros aprendidos (edite uma célula; Ctrl+Z desfaz)</translation>
    </message>
    <message>
        <source>The scoring function&apos;s learned parameters, one tab per matrix (rows × columns as in nn.Linear: out × in)</source>
        <translation>Os parâmetros aprendidos da função de pontuação, uma aba por matriz (linhas × colunas como em nn.Linear: saída × entrada)</translation>
    </message>
    <message>
        <source>{name}: type or paste numbers; each edit is one undo step in the main window</source>
        <translation>{name}: digite ou cole números; cada edição é um passo de desfazer na janela principal</translation>
    </message>
    <message>
        <source>{message} (showing the last good result)</source>
        <translation>{message} (mostrando o último resultado válido)</translation>
    </message>
    <message>
        <source>may attend</source>
        <translation>pode prestar atenção</translation>
    </message>
    <message>
        <source>masked</source>
        <translation>mascarada</translation>
    </message>
    <message>
        <source>(masked)</source>
        <translation>(mascarada)</translation>
    </message>
    <message>
        <source>{scoring} scoring; colour range from the scores themselves</source>
        <translation>pontuação {scoring}; faixa de cores tirada das próprias pontuações</translation>
    </message>
    <message>
        <source>raw ÷ √d = raw ÷ {root} (d = {d})</source>
        <translation>bruta ÷ √d = bruta ÷ {root} (d = {d})</translation>
    </message>
    <message>
        <source>from {what}</source>
        <translation>a partir de {what}</translation>
    </message>
    <message>
        <source>the same as the raw scores: {scoring} has no scaling step</source>
        <translation>iguais às pontuações brutas: a pontuação {scoring} não tem etapa de escala</translation>
    </message>
    <message>
        <source>no valid lengths and no causal mask: every key may be attended</source>
        <translation>sem comprimentos válidos nem máscara causal: toda chave pode receber atenção</translation>
    </message>
    <message>
        <source>2b · Scores with the score terms</source>
        <translation>2b · Escores com os termos de escore</translation>
    </message>
    <message>
        <source>valid lengths {lengths}</source>
        <translation>comprimentos válidos {lengths}</translation>
    </message>
    <message>
        <source>causal ({alignment})</source>
        <translation>causal ({alignment})</translation>
    </message>
    <message>
        <source>from {first} and {second}</source>
        <translation>a partir de {first} e {second}</translation>
    </message>
    <message>
        <source>bug mode: the 0/1 mask is added (+1 on kept keys), nothing is masked</source>
        <translation>modo bug: a máscara 0/1 é somada (+1 nas chaves mantidas), nada é mascarado</translation>
    </message>
    <message>
        <source>bug mode: the mask&apos;s polarity is flipped, the kept keys get −∞</source>
        <translation>modo bug: a polaridade da máscara está invertida, as chaves mantidas recebem −∞</translation>
    </message>
    <message>
        <source>masked keys (hatched) get {fill}; colours from the allowed cells</source>
        <translation>as chaves mascaradas (hachuradas) recebem {fill}; cores tiradas das células permitidas</translation>
    </message>
    <message>
        <source>each row sums to {sums}</source>
        <translation>cada linha soma {sums}</translation>
    </message>
    <message>
        <source>{n} query has no valid key (∅)</source>
        <translation>{n} consulta não tem chave válida (∅)</translation>
    </message>
    <message>
        <source>{n} queries have no valid key (∅)</source>
        <translation>{n} consultas não têm chave válida (∅)</translation>
    </message>
    <message>
        <source>dropout p = {p}: zeroed at random, the rest × {factor}</source>
        <translation>dropout p = {p}: zerados ao acaso, o resto × {factor}</translation>
    </message>
    <message>
        <source>the same as the weights: dropout ({p}) acts in training only (train is off)</source>
        <translation>iguais aos pesos: o dropout ({p}) só age no treinamento (o treinamento está desligado)</translation>
    </message>
    <message>
        <source>the same as the weights: no dropout</source>
        <translation>iguais aos pesos: sem dropout</translation>
    </message>
    <message>
        <source>weights × values: one row of length d_v = {d_v} per query</source>
        <translation>pesos × valores: uma linha de comprimento d_v = {d_v} por consulta</translation>
    </message>
    <message>
        <source>sinks (a logit per head in the softmax)</source>
        <translation>sorvedouros (um logit por cabeça no softmax)</translation>
    </message>
    <message>
        <source>the call&apos;s score terms, in order: {terms}</source>
        <translation>os termos de escore da chamada, em ordem: {terms}</translation>
    </message>
    <message>
        <source>soft cap {cap} (cap · tanh(s / cap))</source>
        <translation>limite suave {cap} (cap · tanh(s / cap))</translation>
    </message>
    <message>
        <source>FlexAttention score_mod</source>
        <translation>score_mod do FlexAttention</translation>
    </message>
    <message>
        <source>ALiBi added (slope · (key - query))</source>
        <translation>ALiBi somado (inclinação · (chave - consulta))</translation>
    </message>
    <message>
        <source>{name} added</source>
        <translation>{name} somado</translation>
    </message>
    <message>
        <source>{scoring} scoring · mask {mask_mode} · {dtype} · batch element {b} of {n}</source>
        <translation>pontuação {scoring} · máscara {mask_mode} · {dtype} · elemento do lote {b} de {n}</translation>
    </message>
    <message>
        <source>cannot compute the features: {error}</source>
        <translation>não é possível calcular as características: {error}</translation>
    </message>
    <message>
        <source>(raw-score map, batch {b}: {value})</source>
        <translation>(mapa de pontuações brutas, lote {b}: {value})</translation>
    </message>
    <message>
        <source>{name} must hold finite numbers: NaN and ±inf are not accepted here</source>
        <translation>{name} deve conter números finitos: NaN e ±inf não são aceitos aqui</translation>
    </message>
    <message>
        <source>the block does not fit into {name} {shape}</source>
        <translation>o bloco não cabe em {name} {shape}</translation>
    </message>
</context>
<context>
    <name>PipelineWalk</name>
    <message>
        <source>Hidden features tanh(W_q q + W_k k)</source>
        <extracomment>The additive scoring&apos;s hidden features tanh(W_q q + W_k k): a stage of the walk of its own. A hidden-features map has a row per key; past this many keys it is not drawn. Each step&apos;s title on the walk (the stage cards&apos; titles say the same, numbered).</extracomment>
        <translation>Atributos ocultos tanh(W_q q + W_k k)</translation>
    </message>
    <message>
        <source>Raw scores a(q, k)</source>
        <translation>Pontuações brutas a(q, k)</translation>
    </message>
    <message>
        <source>Scaled scores</source>
        <translation>Pontuações escalonadas</translation>
    </message>
    <message>
        <source>Scores with the score terms</source>
        <translation>Escores com os termos de escore</translation>
    </message>
    <message>
        <source>Mask (1 = may attend)</source>
        <translation>Máscara (1 = pode prestar atenção)</translation>
    </message>
    <message>
        <source>Masked scores ã (softmax input)</source>
        <translation>Entrada do softmax ã (mascarada)</translation>
    </message>
    <message>
        <source>Softmax weights α</source>
        <translation>Pesos do softmax α</translation>
    </message>
    <message>
        <source>Weights after dropout</source>
        <translation>Pesos após o dropout</translation>
    </message>
    <message>
        <source>Output ∑ α v</source>
        <translation>Saída ∑ α v</translation>
    </message>
    <message>
        <source>the first step</source>
        <extracomment>What each step is computed from, shown beside it as &quot;before&quot; and compared with it cell by cell (the mask is compared with the scores it will mask; the output has a shape of its own).</extracomment>
        <translation>a primeira etapa</translation>
    </message>
    <message>
        <source>which keys each query may attend: the 0s (outlined) will be masked</source>
        <translation>a quais chaves cada consulta pode prestar atenção: os 0 (contornados) serão mascarados</translation>
    </message>
    <message>
        <source>a new shape: nothing to compare cell by cell</source>
        <translation>uma nova forma: nada a comparar célula a célula</translation>
    </message>
    <message>
        <source>no cell changed: this step leaves the values as they were</source>
        <translation>nenhuma célula mudou: esta etapa deixa os valores como estavam</translation>
    </message>
    <message>
        <source>every one of the {total} cells changed</source>
        <translation>todas as {total} células mudaram</translation>
    </message>
    <message>
        <source>{n} of {total} cells changed (outlined)</source>
        <translation>{n} de {total} células mudaram (contornadas)</translation>
    </message>
    <message>
        <source>Hidden unit</source>
        <translation>Unidade oculta</translation>
    </message>
    <message>
        <source>◀ Previous</source>
        <extracomment>The outline of the cells that changed: a magenta no colour map of the app uses. The slider&apos;s positions are tenths of a doubling: 2**(-3) .. 2**3. The maps&apos; share of the walk&apos;s width beside the step&apos;s explanation and code (presentation mode: ``SLIDE_MAP_SHARE``). The title&apos;s and the equation&apos;s size, relative to the walk&apos;s text: larger on a screen, where the walk&apos;s text is the app&apos;s; on a slide, whose text is slide size already, the title on one line between the buttons and the equation at the text&apos;s size (at 1.35 and 1.1 in slide type a step&apos;s explanation ran up to 160 px below a 1280x720 slide in Portuguese). Where the view puts its code panel while the walk is on show. The maps&apos; share of the walk&apos;s width: on a slide the step&apos;s explanation, in slide type, needs more than half of it (at 0.62 it ran 114 px below a 1280x720 slide at the mask step).</extracomment>
        <translation>◀ Anterior</translation>
    </message>
    <message>
        <source>The previous stage (←, Page Up)</source>
        <translation>A etapa anterior (←, Page Up)</translation>
    </message>
    <message>
        <source>Next ▶</source>
        <translation>Próxima ▶</translation>
    </message>
    <message>
        <source>The next stage (→, Page Down)</source>
        <translation>A próxima etapa (→, Page Down)</translation>
    </message>
    <message>
        <source>&amp;What if the scores were × </source>
        <translation>&amp;E se as pontuações fossem × </translation>
    </message>
    <message>
        <source>Multiply the scaled scores (a temperature of 1/×): a what-if of this view only, the document and the other views are unchanged</source>
        <translation>Multiplica as pontuações escalonadas (uma temperatura de 1/×): uma simulação só desta visão; o documento e as outras visões não mudam</translation>
    </message>
    <message>
        <source>× 1</source>
        <translation>× 1</translation>
    </message>
    <message>
        <source>&amp;Query</source>
        <translation>&amp;Consulta</translation>
    </message>
    <message>
        <source>The query whose hidden features are shown</source>
        <translation>A consulta cujos atributos ocultos são mostrados</translation>
    </message>
    <message>
        <source>Back to the app&apos;s scores</source>
        <translation>Voltar às pontuações do app</translation>
    </message>
    <message>
        <source>The stage this one is computed from, for comparison</source>
        <translation>A etapa da qual esta é calculada, para comparar</translation>
    </message>
    <message>
        <source>Step {i} of {n} · {title}</source>
        <translation>Etapa {i} de {n} · {title}</translation>
    </message>
    <message>
        <source>What-if: the scaled scores × {factor} (a temperature of {t}), in this walk only; the document, the other maps and the code are the app&apos;s. No dropout in the what-if.</source>
        <translation>Simulação: as pontuações escalonadas × {factor} (uma temperatura de {t}), só neste percurso; o documento, os outros mapas e o código são os do app. Sem dropout na simulação.</translation>
    </message>
    <message>
        <source>What-if: scores × {factor}, this walk only</source>
        <translation>Simulação: pontuações × {factor}, só neste percurso</translation>
    </message>
    <message>
        <source>Computed from: {title}</source>
        <translation>Calculada a partir de: {title}</translation>
    </message>
    <message>
        <source>query {i}: one row per key; w_v · a row is that key&apos;s raw score</source>
        <translation>consulta {i}: uma linha por chave; w_v · uma linha é a pontuação bruta dessa chave</translation>
    </message>
    <message>
        <source>the hidden features cannot be drawn for this input</source>
        <translation>os atributos ocultos não podem ser desenhados para esta entrada</translation>
    </message>
</context>
<context>
    <name>Presenter</name>
    <message>
        <source>Leave presentation mode</source>
        <translation>Sair do modo de apresentação</translation>
    </message>
    <message>
        <source>&lt;h3&gt;First steps&lt;/h3&gt;&lt;p&gt;&lt;b&gt;What is loaded.&lt;/b&gt; The caption over the maps names the example on show and says what it shows. Presets › pick one of the chapter&apos;s examples; Presets › Pitfalls and Exercises load a lesson, with its question beside the maps.&lt;/p&gt;&lt;p&gt;&lt;b&gt;What to edit.&lt;/b&gt; The tables under the maps hold the queries, keys, values and valid lengths: type a number, paste a block, or fill a table from its menu. The panel on the left sets the shapes and the settings (scoring function, mask mode, dtype...). Every change is computed at once, and Ctrl+Z undoes it.&lt;/p&gt;&lt;p&gt;&lt;b&gt;What each view shows&lt;/b&gt; (View and Tools menus):&lt;/p&gt;&lt;ul&gt;&lt;li&gt;&lt;b&gt;Attention&lt;/b&gt;: the weights of each batch element, masked keys hatched, and the output.&lt;/li&gt;&lt;li&gt;&lt;b&gt;Pipeline&lt;/b&gt;: every stage, from the raw scores to the output, with the chapter&apos;s formulas.&lt;/li&gt;&lt;li&gt;&lt;b&gt;Side by side&lt;/b&gt;: the same inputs under two scorings, mask modes or dtypes, and their difference.&lt;/li&gt;&lt;li&gt;&lt;b&gt;Masking lab&lt;/b&gt;: the input under every masking convention; &lt;b&gt;Scaling lab&lt;/b&gt;: why the scores are divided by √d.&lt;/li&gt;&lt;li&gt;&lt;b&gt;Heads&lt;/b&gt;, &lt;b&gt;Layers × heads&lt;/b&gt;, &lt;b&gt;Tokens&lt;/b&gt;, &lt;b&gt;Long context&lt;/b&gt;, &lt;b&gt;Mask doctor&lt;/b&gt;: a real model&apos;s attention, opened from a file or a capture.&lt;/li&gt;&lt;/ul&gt;&lt;p&gt;&lt;b&gt;On a projector&lt;/b&gt;: F5 (presentation mode) enlarges everything and hides the editing chrome; the bar at the top steps through the lessons and opens the views. F1 lists every key.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Primeiros passos&lt;/h3&gt;&lt;p&gt;&lt;b&gt;O que está carregado.&lt;/b&gt; A legenda sobre os mapas nomeia o exemplo em exibição e diz o que ele mostra. Predefinições › escolha um dos exemplos do capítulo; Predefinições › Armadilhas e Exercícios carregam uma lição, com sua pergunta ao lado dos mapas.&lt;/p&gt;&lt;p&gt;&lt;b&gt;O que editar.&lt;/b&gt; As tabelas sob os mapas contêm as consultas, chaves, valores e comprimentos válidos: digite um número, cole um bloco ou preencha uma tabela pelo seu menu. O painel à esquerda define as formas e as configurações (função de pontuação, modo de máscara, dtype...). Cada mudança é calculada na hora, e Ctrl+Z a desfaz.&lt;/p&gt;&lt;p&gt;&lt;b&gt;O que cada vista mostra&lt;/b&gt; (menus Exibir e Ferramentas):&lt;/p&gt;&lt;ul&gt;&lt;li&gt;&lt;b&gt;Atenção&lt;/b&gt;: os pesos de cada elemento do lote, chaves mascaradas hachuradas, e a saída.&lt;/li&gt;&lt;li&gt;&lt;b&gt;Pipeline&lt;/b&gt;: cada etapa, das pontuações brutas à saída, com as fórmulas do capítulo.&lt;/li&gt;&lt;li&gt;&lt;b&gt;Lado a lado&lt;/b&gt;: as mesmas entradas sob duas pontuações, modos de máscara ou dtypes, e sua diferença.&lt;/li&gt;&lt;li&gt;&lt;b&gt;Laboratório de máscaras&lt;/b&gt;: a entrada sob cada convenção de máscara; &lt;b&gt;Laboratório de escala&lt;/b&gt;: por que as pontuações são divididas por √d.&lt;/li&gt;&lt;li&gt;&lt;b&gt;Cabeças&lt;/b&gt;, &lt;b&gt;Camadas × cabeças&lt;/b&gt;, &lt;b&gt;Tokens&lt;/b&gt;, &lt;b&gt;Contexto longo&lt;/b&gt;, &lt;b&gt;Médico de máscaras&lt;/b&gt;: a atenção de um modelo real, aberta de um arquivo ou de uma captura.&lt;/li&gt;&lt;/ul&gt;&lt;p&gt;&lt;b&gt;Num projetor&lt;/b&gt;: F5 (modo de apresentação) amplia tudo e esconde os controles de edição; a barra no topo percorre as lições e abre as vistas. F1 lista todas as teclas.&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Start or end the pipeline&apos;s stage-by-stage walk</source>
        <translation>Iniciar ou encerrar o passo a passo das etapas do pipeline</translation>
    </message>
    <message>
        <source>The walk&apos;s next or previous step (presentation mode)</source>
        <translation>Próximo ou anterior passo do passo a passo (modo apresentação)</translation>
    </message>
    <message>
        <source>Next slide: the walk&apos;s next step, the answer, the next lesson</source>
        <translation>Próximo slide: o próximo passo, a resposta, a próxima lição</translation>
    </message>
    <message>
        <source>Previous slide (presentation mode)</source>
        <translation>Slide anterior (modo apresentação)</translation>
    </message>
    <message>
        <source>The previous slide of the lecture (Page Up)</source>
        <extracomment>The lecture the clicker gives (``install_presenter`` wires the buttons and keys to it). Next and previous lesson (Presets menu): Page Down and Page Up while presenting only, since elsewhere those keys scroll the tables.</extracomment>
        <translation>O slide anterior da aula (Page Up)</translation>
    </message>
    <message>
        <source>The next slide of the lecture: the walk&apos;s next step, a lesson&apos;s answer (Page Down)</source>
        <translation>O próximo slide da aula: o próximo passo, a resposta de uma lição (Page Down)</translation>
    </message>
    <message>
        <source>Example</source>
        <translation>Exemplo</translation>
    </message>
    <message>
        <source>Load one of the chapter&apos;s examples or a lesson</source>
        <translation>Carregar um dos exemplos do capítulo ou uma lição</translation>
    </message>
    <message>
        <source>View</source>
        <translation>Vista</translation>
    </message>
    <message>
        <source>Show a view (their shortcuts work here too: F1 lists them)</source>
        <translation>Mostrar uma vista (os atalhos delas também funcionam aqui: F1 lista todos)</translation>
    </message>
    <message>
        <source>Keys (F1)</source>
        <translation>Teclas (F1)</translation>
    </message>
    <message>
        <source>Every keyboard shortcut</source>
        <translation>Todos os atalhos de teclado</translation>
    </message>
    <message>
        <source>Leave (F5)</source>
        <translation>Sair (F5)</translation>
    </message>
    <message>
        <source>Leave presentation mode: the window comes back as it was</source>
        <translation>Sair do modo de apresentação: a janela volta a ser como era</translation>
    </message>
    <message>
        <source>Slide {shown}/{total}</source>
        <translation>Slide {shown}/{total}</translation>
    </message>
    <message>
        <source>Attention (the main view)</source>
        <translation>Atenção (a vista principal)</translation>
    </message>
    <message>
        <source>Keyboard map</source>
        <translation>Mapa do teclado</translation>
    </message>
    <message>
        <source>First steps</source>
        <translation>Primeiros passos</translation>
    </message>
    <message>
        <source>&amp;First steps</source>
        <extracomment>Help&apos;s entries (marked sources).</extracomment>
        <translation>&amp;Primeiros passos</translation>
    </message>
    <message>
        <source>What to edit, and what each view shows</source>
        <translation>O que editar, e o que cada vista mostra</translation>
    </message>
    <message>
        <source>&amp;Keyboard map</source>
        <translation>&amp;Mapa do teclado</translation>
    </message>
    <message>
        <source>Every keyboard shortcut, presentation mode&apos;s included</source>
        <translation>Todos os atalhos de teclado, inclusive os do modo de apresentação</translation>
    </message>
    <message>
        <source>Next slide</source>
        <translation>Próximo slide</translation>
    </message>
    <message>
        <source>Previous slide</source>
        <translation>Slide anterior</translation>
    </message>
    <message>
        <source>Open a lecture plan…</source>
        <translation>Abrir um plano de aula…</translation>
    </message>
    <message>
        <source>The order of the slides Page Down walks in presentation mode, from a .json file</source>
        <translation>A ordem dos slides que o Page Down percorre no modo apresentação, de um arquivo .json</translation>
    </message>
    <message>
        <source>Save the lecture plan…</source>
        <translation>Salvar o plano de aula…</translation>
    </message>
    <message>
        <source>The order of the slides as a small .json file, to reorder by hand and share</source>
        <translation>A ordem dos slides como um pequeno arquivo .json, para reordenar à mão e compartilhar</translation>
    </message>
    <message>
        <source>Open a lecture plan</source>
        <translation>Abrir um plano de aula</translation>
    </message>
    <message>
        <source>Lecture plans (*.json)</source>
        <translation>Planos de aula (*.json)</translation>
    </message>
    <message>
        <source>Save the lecture plan</source>
        <translation>Salvar o plano de aula</translation>
    </message>
    <message>
        <source>The last slide of the lecture</source>
        <extracomment>The plan&apos;s views by their docks. The slide on show changed (its index), or the plan did.</extracomment>
        <translation>O último slide da aula</translation>
    </message>
    <message>
        <source>The first slide of the lecture</source>
        <translation>O primeiro slide da aula</translation>
    </message>
    <message>
        <source>Not a lecture plan: {reason}</source>
        <translation>Não é um plano de aula: {reason}</translation>
    </message>
    <message>
        <source>Lecture plan opened: {count} slides</source>
        <translation>Plano de aula aberto: {count} slides</translation>
    </message>
    <message>
        <source>The lecture plan could not be saved: {reason}</source>
        <translation>Não foi possível salvar o plano de aula: {reason}</translation>
    </message>
</context>
<context>
    <name>Presets</name>
    <message>
        <source>Book: additive attention toy</source>
        <translation>Livro: exemplo de brinquedo de atenção aditiva</translation>
    </message>
    <message>
        <source>Queries (2, 1, 20), identical keys (2, 10, 2), values arange(40), valid lengths 2 and 6: identical keys give uniform weights over the valid ones, and the output is the mean of the valid values, [[2, 3, 4, 5]] and [[10, 11, 12, 13]].</source>
        <translation>Consultas (2, 1, 20), chaves idênticas (2, 10, 2), valores arange(40), comprimentos válidos 2 e 6: chaves idênticas dão pesos uniformes sobre as válidas, e a saída é a média dos valores válidos, [[2, 3, 4, 5]] e [[10, 11, 12, 13]].</translation>
    </message>
    <message>
        <source>Book: scaled dot-product toy</source>
        <translation>Livro: exemplo de brinquedo de produto escalar escalonado</translation>
    </message>
    <message>
        <source>The same keys, values and valid lengths with queries (2, 1, 2) and scaled dot-product scoring: again uniform weights, output [[2, 3, 4, 5]] and [[10, 11, 12, 13]].</source>
        <translation>As mesmas chaves, valores e comprimentos válidos, com consultas (2, 1, 2) e pontuação por produto escalar escalonado: de novo pesos uniformes, saída [[2, 3, 4, 5]] e [[10, 11, 12, 13]].</translation>
    </message>
    <message>
        <source>Book: masked softmax, 1-D valid lengths</source>
        <translation>Livro: softmax mascarado, comprimentos válidos 1-D</translation>
    </message>
    <message>
        <source>Random scores of shape (2, 2, 4) with valid lengths 2 and 3: keys past the valid length get weight 0. (Unscaled dot scoring with identity keys and values makes the scores the queries and the output the weights.)</source>
        <translation>Pontuações aleatórias de formato (2, 2, 4) com comprimentos válidos 2 e 3: as chaves além do comprimento válido recebem peso 0. (Pontuação por produto escalar sem escala, com chaves e valores identidade, faz das pontuações as consultas e da saída os pesos.)</translation>
    </message>
    <message>
        <source>Book: masked softmax, 2-D valid lengths</source>
        <translation>Livro: softmax mascarado, comprimentos válidos 2-D</translation>
    </message>
    <message>
        <source>The same with one valid length per query, [[1, 3], [2, 4]]: a valid length of 1 gives weight 1 to the first key.</source>
        <translation>O mesmo com um comprimento válido por consulta, [[1, 3], [2, 4]]: um comprimento válido 1 dá peso 1 à primeira chave.</translation>
    </message>
</context>
<context>
    <name>QFileDialog</name>
    <message>
        <source>&amp;Look in:</source>
        <translation>&amp;Procurar em:</translation>
    </message>
    <message>
        <source>Files of &amp;type:</source>
        <translation>Arquivos do &amp;tipo:</translation>
    </message>
</context>
<context>
    <name>Render</name>
    <message>
        <source>--out FILE is required (see {prog} --help)</source>
        <extracomment>Exit statuses: a file, engine or write problem; a bad command line. The command lines that end ``--help``. The console script ``attnviz-render`` (its arguments are the process&apos;s).</extracomment>
        <translation>--out FILE é obrigatório (veja {prog} --help)</translation>
    </message>
    <message>
        <source>--out {out}: must end in .png or .svg (a picture), or .npy or .csv (the weights)</source>
        <translation>--out {out}: deve terminar em .png ou .svg (uma imagem), ou em .npy ou .csv (os pesos)</translation>
    </message>
    <message>
        <source>the session is in {path}</source>
        <translation>a sessão está em {path}</translation>
    </message>
    <message>
        <source>no result</source>
        <translation>sem resultado</translation>
    </message>
    <message>
        <source>--batch {batch} is out of range: the input has {n} batch element(s), 0-{last}</source>
        <translation>--batch {batch} está fora do intervalo: a entrada tem {n} elemento(s) de lote, 0-{last}</translation>
    </message>
    <message>
        <source>batch element 0 of {n} is shown (choose one with --batch)</source>
        <translation>é mostrado o elemento do lote 0 de {n} (escolha um com --batch)</translation>
    </message>
    <message>
        <source>note: {note}</source>
        <translation>nota: {note}</translation>
    </message>
    <message>
        <source>wrote {path}</source>
        <translation>gravado: {path}</translation>
    </message>
    <message>
        <source>warning: {warning}</source>
        <translation>aviso: {warning}</translation>
    </message>
    <message>
        <source>--dpi {dpi}: expected a whole number from 1 to {most}</source>
        <translation>--dpi {dpi}: esperava-se um número inteiro de 1 a {most}</translation>
    </message>
    <message>
        <source>--{name} {value}: expected a finite number</source>
        <translation>--{name} {value}: esperava-se um número finito</translation>
    </message>
    <message>
        <source>--vmin {low} must be below --vmax {high}</source>
        <translation>--vmin {low} deve ser menor que --vmax {high}</translation>
    </message>
    <message>
        <source>cannot be written (the folder {folder} does not exist)</source>
        <translation>não pode ser gravado (a pasta {folder} não existe)</translation>
    </message>
    <message>
        <source>is a folder, not an image file</source>
        <translation>é uma pasta, não um arquivo de imagem</translation>
    </message>
    <message>
        <source>--size {text}: expected WIDTHxHEIGHT in pixels, e.g. 800x600</source>
        <translation>--size {text}: esperava-se LARGURAxALTURA em pixels, p. ex. 800x600</translation>
    </message>
    <message>
        <source>--size {text}: each side must be from 1 to {most} pixels</source>
        <translation>--size {text}: cada lado deve ter de 1 a {most} pixels</translation>
    </message>
    <message>
        <source>size {size} is too small for {n} heads: at least {least}</source>
        <extracomment>A map of the grid by default, and the least a ``size`` may leave each (pixels). Tokens are put on the axes up to this many (the axis shows as many as fit without overlapping).</extracomment>
        <translation>o tamanho {size} é pequeno demais para {n} cabeças: no mínimo {least}</translation>
    </message>
    <message>
        <source>head {h}</source>
        <translation>cabeça {h}</translation>
    </message>
    <message>
        <source>weight</source>
        <translation>peso</translation>
    </message>
</context>
<context>
    <name>ResultsPanel</name>
    <message>
        <source>batch {b}, query {r}, key {c}</source>
        <extracomment>Up to this many batch elements are shown side by side; beyond, only the selected one.</extracomment>
        <translation>lote {b}, consulta {r}, chave {c}</translation>
    </message>
    <message>
        <source>query {index}</source>
        <extracomment>One batch element&apos;s output: (its index, its (queries, value dimensions) array, its row labels).</extracomment>
        <translation>consulta {index}</translation>
    </message>
    <message>
        <source>value dimension {index}</source>
        <translation>dimensão de valor {index}</translation>
    </message>
    <message>
        <source>(masked)</source>
        <translation>(mascarada)</translation>
    </message>
    <message>
        <source>raw score {value}</source>
        <translation>pontuação bruta {value}</translation>
    </message>
    <message>
        <source>masked score {value}</source>
        <translation>pontuação mascarada {value}</translation>
    </message>
    <message>
        <source>weight {value}</source>
        <translation>peso {value}</translation>
    </message>
    <message>
        <source>after dropout {value}</source>
        <translation>após o dropout {value}</translation>
    </message>
    <message>
        <source>this query has no valid key</source>
        <translation>esta consulta não tem chave válida</translation>
    </message>
    <message>
        <source>Auto, shared</source>
        <extracomment>The colour ranges as the scale box names them.</extracomment>
        <translation>Automática, comum</translation>
    </message>
    <message>
        <source>Auto, per map</source>
        <translation>Automática, por mapa</translation>
    </message>
    <message>
        <source>0 – 1</source>
        <translation>0 – 1</translation>
    </message>
    <message>
        <source>Logarithmic</source>
        <translation>Logarítmica</translation>
    </message>
    <message>
        <source>&amp;Output</source>
        <translation>&amp;Saída</translation>
    </message>
    <message>
        <source>Output &amp;map</source>
        <translation>&amp;Mapa da saída</translation>
    </message>
    <message>
        <source>output</source>
        <translation>saída</translation>
    </message>
    <message>
        <source>{query} → {key}</source>
        <translation>{query} → {key}</translation>
    </message>
    <message>
        <source>a padding query: the model computes this row, nothing reads it</source>
        <translation>uma consulta de padding: o modelo calcula esta linha, mas nada a lê</translation>
    </message>
    <message>
        <source>Output numbers (read-only; Ctrl+C copies)</source>
        <translation>Números da saída (somente leitura; Ctrl+C copia)</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>Saída</translation>
    </message>
    <message>
        <source>Value dimension</source>
        <extracomment>Up to this many value dimensions share the table&apos;s width; more scroll sideways.</extracomment>
        <translation>Dimensão do valor</translation>
    </message>
    <message>
        <source>The attention output (weights @ values) of the batch elements on show</source>
        <extracomment>Makes a map follow its owner&apos;s colour map, fonts and theme (the results panel&apos;s ``own_map``); the maps after the first are made when a result has more batch elements.</extracomment>
        <translation>A saída da atenção (pesos @ valores) dos elementos do lote exibidos</translation>
    </message>
    <message>
        <source>Queries</source>
        <translation>Consultas</translation>
    </message>
    <message>
        <source>Output as a heatmap (colour scale from its own range)</source>
        <translation>A saída como mapa de calor (escala de cores da própria faixa)</translation>
    </message>
    <message>
        <source>Attention weights</source>
        <extracomment>Height of one weights map: about this many pixels per query row, within these bounds. Past this many weights, the top of an automatic scale is a high percentile, not the maximum. Percentiles are taken on a strided sample of at most this many weights (a 4096x4096 map would cost the GUI thread ~0.2 s otherwise; the sample&apos;s percentile differs by a hair). Query rows to outline, and the batch element they are of (``AppSession.outline_rows``).</extracomment>
        <translation>Pesos de atenção</translation>
    </message>
    <message>
        <source>softmax of the masked scores; keys across, queries down</source>
        <translation>softmax das pontuações mascaradas; chaves na horizontal, consultas na vertical</translation>
    </message>
    <message>
        <source>Colour map of the heatmaps (cividis: perceptually uniform and colour-blind safe)</source>
        <translation>Mapa de cores dos mapas de calor (cividis: perceptualmente uniforme e seguro para daltônicos)</translation>
    </message>
    <message>
        <source>C&amp;olour map</source>
        <translation>Mapa de c&amp;ores</translation>
    </message>
    <message>
        <source>Sc&amp;ale</source>
        <translation>&amp;Escala</translation>
    </message>
    <message>
        <source>What the colours span. Auto: from 0 to the largest weights of the batch (shared, so maps compare) or of each map; past a thousand weights, to the 99.5th percentile, so that one large weight does not darken all the others. Or 0 to 1, or a logarithmic scale for weights spread over many keys.</source>
        <translation>O que as cores abrangem. Automática: de 0 aos maiores pesos do lote (comum, para comparar os mapas) ou de cada mapa; acima de mil pesos, até o percentil 99,5, para que um peso grande não escureça todos os outros. Ou de 0 a 1, ou uma escala logarítmica para pesos espalhados por muitas chaves.</translation>
    </message>
    <message>
        <source>What the diagnostics found in the last result</source>
        <translation>O que o diagnóstico encontrou no último resultado</translation>
    </message>
    <message>
        <source>One heatmap per batch element; hover a cell for its numbers</source>
        <translation>Um mapa de calor por elemento do lote; passe o mouse sobre uma célula para ver seus números</translation>
    </message>
    <message>
        <source>Keys</source>
        <extracomment>The weights maps&apos; axes.</extracomment>
        <translation>Chaves</translation>
    </message>
    <message>
        <source>edited since it was loaded (Ctrl+Z goes back to it)</source>
        <translation>editado desde que foi carregado (Ctrl+Z volta a ele)</translation>
    </message>
    <message>
        <source>The example on show (Presets menu)</source>
        <translation>O exemplo em exibição (menu Predefinições)</translation>
    </message>
    <message>
        <source>batch {b} of {n}</source>
        <translation>lote {b} de {n}</translation>
    </message>
    <message>
        <source>batch {b}</source>
        <translation>lote {b}</translation>
    </message>
</context>
<context>
    <name>RunCompare</name>
    <message>
        <source>Compare runs: where two runs differ</source>
        <translation>Comparar execuções: onde duas execuções diferem</translation>
    </message>
    <message>
        <source>Compare &amp;runs</source>
        <translation>Comparar &amp;execuções</translation>
    </message>
    <message>
        <source>Two runs of a model call by call: a layers × heads map of their differences, a head&apos;s maps and their difference; with a live model, what an edited mask or an ablated head changes in the output</source>
        <translation>Duas execuções de um modelo, chamada por chamada: um mapa camadas × cabeças das suas diferenças, os mapas de uma cabeça e sua diferença; com um modelo vivo, o que uma máscara editada ou uma cabeça removida muda na saída</translation>
    </message>
    <message>
        <source>Flip a mask cell</source>
        <translation>Inverter uma célula da máscara</translation>
    </message>
    <message>
        <source>A</source>
        <translation>A</translation>
    </message>
    <message>
        <source>B</source>
        <translation>B</translation>
    </message>
    <message>
        <source>Compare with a capture</source>
        <translation>Comparar com uma captura</translation>
    </message>
    <message>
        <source>Captures (*.attnviz-capture);;All files (*)</source>
        <translation>Capturas (*.attnviz-capture);;Todos os arquivos (*)</translation>
    </message>
    <message>
        <source>Comparing with {name}…</source>
        <translation>Comparando com {name}…</translation>
    </message>
    <message>
        <source>on show</source>
        <translation>em exibição</translation>
    </message>
    <message>
        <source>Restore an ablated head</source>
        <translation>Restaurar uma cabeça removida</translation>
    </message>
    <message>
        <source>Ablate a head</source>
        <translation>Remover uma cabeça</translation>
    </message>
    <message>
        <source>file</source>
        <translation>arquivo</translation>
    </message>
    <message>
        <source>captured</source>
        <translation>capturada</translation>
    </message>
    <message>
        <source>edited</source>
        <translation>editada</translation>
    </message>
    <message>
        <source>The maps of head {head} of {name} ({n_q} x {n_k}) need about {size}, more than the memory budget of {budget}: the call x head map above compares every head exactly, a block of rows at a time</source>
        <extracomment>Why the maps were not made (a head over the memory budget): a marked text, else &quot;&quot;.</extracomment>
        <translation>Os mapas da cabeça {head} de {name} ({n_q} x {n_k}) precisam de cerca de {size}, mais que o orçamento de memória de {budget}: o mapa chamada x cabeça acima compara todas as cabeças exatamente, um bloco de linhas por vez</translation>
    </message>
    <message>
        <source>Compare with a capture file</source>
        <translation>Comparar com um arquivo de captura</translation>
    </message>
    <message>
        <source>Stop comparing with the capture file</source>
        <translation>Parar de comparar com o arquivo de captura</translation>
    </message>
    <message>
        <source>Running the model again with the edits…</source>
        <translation>Executando o modelo de novo com as edições…</translation>
    </message>
    <message>
        <source>Comparing with the capture file…</source>
        <translation>Comparando com o arquivo de captura…</translation>
    </message>
    <message>
        <source>Cancelled: the maps show the last run that finished</source>
        <translation>Cancelado: os mapas mostram a última execução concluída</translation>
    </message>
    <message>
        <source>Compare with…</source>
        <translation>Comparar com…</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancelar</translation>
    </message>
    <message>
        <source>Stop comparing with the file</source>
        <translation>Parar de comparar com o arquivo</translation>
    </message>
    <message>
        <source>With a live model: click a cell to flip that mask cell and run the model again</source>
        <translation>Com um modelo vivo: clique numa célula para inverter essa célula da máscara e executar o modelo de novo</translation>
    </message>
    <message>
        <source>call {index} ({call}), head {h}: weights differ by up to {value}; click to show it</source>
        <translation>chamada {index} ({call}), cabeça {h}: os pesos diferem em até {value}; clique para mostrá-la</translation>
    </message>
    <message>
        <source>call × head, up to {value}</source>
        <translation>chamada × cabeça, até {value}</translation>
    </message>
    <message>
        <source>difference, up to {value}</source>
        <translation>diferença, até {value}</translation>
    </message>
    <message>
        <source>Call {index} ({name}), head {h}, batch {b}: {a}, {b_run} and |{b_run} − {a}|</source>
        <translation>Chamada {index} ({name}), cabeça {h}, lote {b}: {a}, {b_run} e |{b_run} − {a}|</translation>
    </message>
    <message>
        <source>Differ most: {calls}</source>
        <translation>Diferem mais: {calls}</translation>
    </message>
    <message>
        <source>The model&apos;s output changed by up to {value}</source>
        <translation>A saída do modelo mudou em até {value}</translation>
    </message>
    <message>
        <source>(no edits: the captured run)</source>
        <translation>(sem edições: a execução capturada)</translation>
    </message>
    <message>
        <source>KL per position, batch {b}: {values}</source>
        <translation>KL por posição, lote {b}: {values}</translation>
    </message>
    <message>
        <source>position {p}: next tokens {before} → {after}</source>
        <translation>posição {p}: próximos tokens {before} → {after}</translation>
    </message>
    <message>
        <source>No comparison yet: File › Compare with… a capture, or attnviz.show(model=model, inputs=inputs)</source>
        <translation>Nenhuma comparação ainda: Arquivo › Comparar com… uma captura, ou attnviz.show(model=model, inputs=inputs)</translation>
    </message>
    <message>
        <source>{a} vs {b}: {n} calls, largest weight difference {w}, heads&apos; output difference {o}</source>
        <translation>{a} vs {b}: {n} chamadas, maior diferença de pesos {w}, diferença da saída das cabeças {o}</translation>
    </message>
    <message>
        <source>{n} calls unmatched</source>
        <translation>{n} chamadas sem par</translation>
    </message>
    <message>
        <source>Compare &amp;with…</source>
        <translation>Comparar &amp;com…</translation>
    </message>
    <message>
        <source>Compare the run on show with a capture file, call by call</source>
        <translation>Comparar a execução em exibição com um arquivo de captura, chamada por chamada</translation>
    </message>
</context>
<context>
    <name>ScalingLab</name>
    <message>
        <source>Score variance</source>
        <extracomment>A mean square of queries or keys this far from 1 (ratio) earns a note: the curves assume 1. Where each plot sits (row, column) below the legend: two rows of three. On a slide the plots a page at a time (Page Down: ``SlidePages``): what scaling does to the softmax, then its gradient beside the numbers of your inputs, then (additive attention) tanh&apos;s saturation beside them. Two rows and the notes were more than a 1280x720 slide holds in slide type (the page scrolled, the plots were 60 px high and the notes scrolled in their strip). The two markers of a plot sit this far apart (log2 d units) so neither hides the other. The plots: key, title, y label, statistic name in the curves, log y axis.</extracomment>
        <translation>Variância das pontuações</translation>
    </message>
    <message>
        <source>variance</source>
        <translation>variância</translation>
    </message>
    <message>
        <source>Entropy</source>
        <translation>Entropia</translation>
    </message>
    <message>
        <source>entropy (nats)</source>
        <translation>entropia (nats)</translation>
    </message>
    <message>
        <source>Largest weight</source>
        <translation>Maior peso</translation>
    </message>
    <message>
        <source>max weight</source>
        <translation>peso máximo</translation>
    </message>
    <message>
        <source>Softmax gradient</source>
        <translation>Gradiente do softmax</translation>
    </message>
    <message>
        <source>q·k (unscaled)</source>
        <translation>q·k (sem escala)</translation>
    </message>
    <message>
        <source>q·k / √d (scaled)</source>
        <translation>q·k / √d (escalonado)</translation>
    </message>
    <message>
        <source>d (length of q and k)</source>
        <translation>d (comprimento de q e k)</translation>
    </message>
    <message>
        <source>uniform</source>
        <translation>uniforme</translation>
    </message>
    <message>
        <source>tanh saturation</source>
        <translation>Saturação da tanh</translation>
    </message>
    <message>
        <source>values</source>
        <translation>valores</translation>
    </message>
    <message>
        <source>your inputs (unscaled)</source>
        <translation>suas entradas (sem escala)</translation>
    </message>
    <message>
        <source>your inputs (scaled)</source>
        <translation>suas entradas (escalonadas)</translation>
    </message>
    <message>
        <source>uniform weights</source>
        <translation>pesos uniformes</translation>
    </message>
    <message>
        <source>Random unit-variance q and k of length d: without scaling the scores&apos; variance grows like d, the softmax collapses onto one key (entropy → 0, largest weight → 1) and its gradient vanishes; dividing by √d keeps all three where they are at d = 1. Stars: your inputs.</source>
        <extracomment>The notes&apos; share of a slide&apos;s width, beside the second page&apos;s plots. On a slide the plots a row at a time (``SLIDE_PAGES``); off a slide one page.</extracomment>
        <translation>q e k aleatórios de variância unitária e comprimento d: sem escala, a variância das pontuações cresce como d, o softmax colapsa em uma chave (entropia → 0, maior peso → 1) e seu gradiente desaparece; dividir por √d mantém os três onde estão em d = 1. Estrelas: suas entradas.</translation>
    </message>
    <message>
        <source>Why scores are divided by √d, with the current queries and keys marked</source>
        <translation>Por que as pontuações são divididas por √d, com as consultas e chaves atuais marcadas</translation>
    </message>
    <message>
        <source>no curves</source>
        <translation>sem curvas</translation>
    </message>
    <message>
        <source>Entropy, {n} keys</source>
        <translation>Entropia, {n} chaves</translation>
    </message>
    <message>
        <source>Largest weight, {n} keys</source>
        <translation>Maior peso, {n} chaves</translation>
    </message>
    <message>
        <source>tanh: {share} saturated</source>
        <translation>tanh: {share} saturada</translation>
    </message>
    <message>
        <source>&lt;b&gt;Your inputs are not marked.&lt;/b&gt;</source>
        <translation>&lt;b&gt;Suas entradas não estão marcadas.&lt;/b&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;Your inputs&lt;/b&gt;: d = {d}, 1 query row, {keys} allowed keys on average.</source>
        <translation>&lt;b&gt;Suas entradas&lt;/b&gt;: d = {d}, 1 linha de consulta, {keys} chaves permitidas em média.</translation>
    </message>
    <message>
        <source>&lt;b&gt;Your inputs&lt;/b&gt;: d = {d}, {rows} query rows, {keys} allowed keys per row on average.</source>
        <translation>&lt;b&gt;Suas entradas&lt;/b&gt;: d = {d}, {rows} linhas de consulta, {keys} chaves permitidas por linha em média.</translation>
    </message>
    <message>
        <source>entropy</source>
        <translation>entropia</translation>
    </message>
    <message>
        <source>gradient</source>
        <translation>gradiente</translation>
    </message>
    <message>
        <source>unscaled</source>
        <translation>sem escala</translation>
    </message>
    <message>
        <source>scaled</source>
        <translation>com escala</translation>
    </message>
    <message>
        <source>queries and keys</source>
        <translation>consultas e chaves</translation>
    </message>
    <message>
        <source>queries</source>
        <translation>consultas</translation>
    </message>
    <message>
        <source>keys</source>
        <translation>chaves</translation>
    </message>
    <message>
        <source>The curves assume unit-variance entries; your {which} have mean square {q} (q) and {k} (k), so the unscaled variance is about d × {q} × {k} = {product} rather than {d}.</source>
        <translation>As curvas supõem entradas de variância unitária; suas {which} têm média dos quadrados {q} (q) e {k} (k), então a variância sem escala é cerca de d × {q} × {k} = {product} em vez de {d}.</translation>
    </message>
    <message>
        <source>Curves: {samples} random (q, keys) samples per d, softmax over {keys} keys (your average, rounded).</source>
        <translation>Curvas: {samples} amostras aleatórias (q, chaves) por d, softmax sobre {keys} chaves (a sua média, arredondada).</translation>
    </message>
    <message>
        <source>(a random sample of pairs)</source>
        <translation>(uma amostra aleatória de pares)</translation>
    </message>
    <message>
        <source>&lt;b&gt;tanh&lt;/b&gt;: {share} of the {n} hidden values have |tanh| &amp;gt; {threshold} (|h| &amp;gt; {pre}, right of the dashed line), where the gradient 1 − tanh² is below {gradient}</source>
        <translation>&lt;b&gt;tanh&lt;/b&gt;: {share} dos {n} valores ocultos têm |tanh| &amp;gt; {threshold} (|h| &amp;gt; {pre}, à direita da linha tracejada), onde o gradiente 1 − tanh² fica abaixo de {gradient}</translation>
    </message>
    <message>
        <source>your inputs (unscaled, scaled)</source>
        <translation>suas entradas (sem escala, com escala)</translation>
    </message>
    <message>
        <source>computing the curves…</source>
        <translation>calculando as curvas…</translation>
    </message>
    <message>
        <source>Scaling lab: why divide by √d</source>
        <translation>Laboratório de escala: por que dividir por √d</translation>
    </message>
    <message>
        <source>&amp;Scaling lab</source>
        <translation>Laboratório de &amp;escala</translation>
    </message>
    <message>
        <source>Variance, softmax entropy, largest weight and gradient against d, scaled and unscaled, with the current inputs marked; tanh saturation for additive attention</source>
        <translation>Variância, entropia do softmax, maior peso e gradiente em função de d, com e sem escala, com as entradas atuais marcadas; saturação da tanh para a atenção aditiva</translation>
    </message>
</context>
<context>
    <name>Scoring</name>
    <message>
        <source>Dot product (unscaled)</source>
        <translation>Produto escalar (sem escala)</translation>
    </message>
    <message>
        <source>Scaled dot product</source>
        <translation>Produto escalar escalonado</translation>
    </message>
    <message>
        <source>Additive</source>
        <extracomment>Its name in menus and titles (marked for translation). LaTeX of a(q, k): the formula panel renders the built-in ones by hand, others from this. Queries and keys must have the same length d. Names of its learnable parameters (empty: none), e.g. (&quot;W_q&quot;, &quot;W_k&quot;, &quot;w_v&quot;). Whether a hidden size shapes its parameters (additive attention&apos;s h). The raw scores are divided by a scale (a separate &quot;scaled&quot; stage in the pipeline). One line about it for the formula panel (marked for translation; may hold simple HTML). A bug people make, not a convention anyone should choose. What it does with the mask: &quot;applied&quot; as meant, &quot;none&quot; (nothing is masked: a 1/0 mask added as a float), or &quot;inverted&quot; (the polarity is read the other way round).</extracomment>
        <translation>Aditiva</translation>
    </message>
    <message>
        <source>Bilinear (general)</source>
        <translation>Bilinear (geral)</translation>
    </message>
    <message>
        <source>Gaussian kernel</source>
        <translation>Núcleo gaussiano</translation>
    </message>
    <message>
        <source>Vector summation</source>
        <translation>Soma de vetores</translation>
    </message>
</context>
<context>
    <name>Settings</name>
    <message>
        <source>one of {choices}</source>
        <extracomment>How undo texts name it (&quot;Change {undo_name}&quot;), marked for translation. Its caption in a settings panel (marked, with its accelerator); &quot;&quot;: not shown in one. Its tooltip in the panel (marked). The panel it is shown in (``ATTENTION``, ``LONG_MASKS``), or &quot;&quot; for none. Shown on the row of that setting rather than on a row of its own. Its ``attnviz render`` option (None: ``--`` and the name with dashes; &quot;&quot;: none). The option&apos;s help (English, as argparse&apos;s own words are); &quot;&quot;: the undo name. An earlier name of the option, still accepted with a note saying the new one (&quot;&quot;: none). A call&apos;s own (a model&apos;s calls differ in it): ``SetSettings`` writes it into the call on show, and ``document.Settings`` has no field for it. Changing it makes the learnable parameters start again from their seed (they no longer fit, or belong to another scoring function). Whether it changes anything under these settings (the panel greys it out when not). The choices, value -&gt; marked label, read each time (a catalogue grows). The catalogue the choices come from, if it tells when one is registered. How None is typed on the command line.</extracomment>
        <translation>um destes: {choices}</translation>
    </message>
    <message>
        <source>a whole number from {low} to {high}</source>
        <extracomment>What the spin box shows for 0 (a mask that is off), if anything.</extracomment>
        <translation>um número inteiro de {low} a {high}</translation>
    </message>
    <message>
        <source>a number above {low}</source>
        <extracomment>The spin box&apos;s step and decimals.</extracomment>
        <translation>um número acima de {low}</translation>
    </message>
    <message>
        <source>a number from {low} to {high}</source>
        <translation>um número de {low} a {high}</translation>
    </message>
    <message>
        <source>null or {phrase}</source>
        <translation>null ou {phrase}</translation>
    </message>
    <message>
        <source>true or false</source>
        <translation>true ou false</translation>
    </message>
    <message>
        <source>a device name such as &quot;cpu&quot;</source>
        <translation>um nome de dispositivo como &quot;cpu&quot;</translation>
    </message>
</context>
<context>
    <name>SettingsPanel</name>
    <message>
        <source>&amp;Batch</source>
        <translation>&amp;Lote</translation>
    </message>
    <message>
        <source>Number of batch elements (independent examples)</source>
        <translation>Número de elementos do lote (exemplos independentes)</translation>
    </message>
    <message>
        <source>&amp;Queries</source>
        <translation>&amp;Consultas</translation>
    </message>
    <message>
        <source>Number of queries per batch element (rows of the attention map)</source>
        <translation>Número de consultas por elemento do lote (linhas do mapa de atenção)</translation>
    </message>
    <message>
        <source>&amp;Keys</source>
        <translation>C&amp;haves</translation>
    </message>
    <message>
        <source>Number of key-value pairs per batch element (columns of the attention map)</source>
        <translation>Número de pares chave-valor por elemento do lote (colunas do mapa de atenção)</translation>
    </message>
    <message>
        <source>Length of each query vector</source>
        <translation>Comprimento de cada vetor de consulta</translation>
    </message>
    <message>
        <source>Length of each key vector (dot-product scoring needs d_k = d_q)</source>
        <translation>Comprimento de cada vetor de chave (a pontuação por produto escalar exige d_k = d_q)</translation>
    </message>
    <message>
        <source>Length of each value vector (the output has this length too)</source>
        <translation>Comprimento de cada vetor de valor (a saída também tem esse comprimento)</translation>
    </message>
    <message>
        <source>None</source>
        <extracomment>Valid-length modes of the document, as the settings show them.</extracomment>
        <translation>Nenhum</translation>
    </message>
    <message>
        <source>1-D (per batch)</source>
        <translation>1-D (por lote)</translation>
    </message>
    <message>
        <source>2-D (per query)</source>
        <translation>2-D (por consulta)</translation>
    </message>
    <message>
        <source>Off</source>
        <extracomment>Causal masks: off, PyTorch&apos;s is_causal (top-left), or aligned to the last key (KV cache).</extracomment>
        <translation>Desligada</translation>
    </message>
    <message>
        <source>Top-left (is_causal)</source>
        <translation>Superior esq. (is_causal)</translation>
    </message>
    <message>
        <source>Bottom-right (KV cache)</source>
        <translation>Inferior dir. (cache KV)</translation>
    </message>
    <message>
        <source>Shapes</source>
        <translation>Formatos</translation>
    </message>
    <message>
        <source>Dimensions of the tensors; values that still fit are kept when they change</source>
        <translation>Dimensões dos tensores; os valores que ainda cabem são mantidos quando elas mudam</translation>
    </message>
    <message>
        <source>Attention</source>
        <extracomment>The ``attnviz.state.settings`` group this panel shows. Rows shared by two settings (training mode beside dropout), by the first one&apos;s name.</extracomment>
        <translation>Atenção</translation>
    </message>
    <message>
        <source>How scores are computed and masked</source>
        <translation>Como as pontuações são calculadas e mascaradas</translation>
    </message>
    <message>
        <source>Scoring function a(q, k)</source>
        <translation>Função de pontuação a(q, k)</translation>
    </message>
    <message>
        <source>Hidden size h of additive attention (W_q, W_k are h x d)</source>
        <translation>Tamanho oculto h da atenção aditiva (W_q e W_k são h x d)</translation>
    </message>
    <message>
        <source>Seed of the learnable parameters (additive, bilinear)</source>
        <translation>Semente dos parâmetros aprendíveis (aditiva, bilinear)</translation>
    </message>
    <message>
        <source>Valid lengths: none, one per batch element (1-D), or one per query (2-D)</source>
        <translation>Comprimentos válidos: nenhum, um por elemento do lote (1-D) ou um por consulta (2-D)</translation>
    </message>
    <message>
        <source>How masked keys are applied: the book&apos;s -1e6 fill, strict, or the conventions (and bugs) of other libraries</source>
        <translation>Como as chaves mascaradas são aplicadas: o preenchimento -1e6 do livro, estrito, ou as convenções (e bugs) de outras bibliotecas</translation>
    </message>
    <message>
        <source>Causal mask: query i sees keys up to i (top-left) or up to i + K - Q (bottom-right)</source>
        <translation>Máscara causal: a consulta i vê as chaves até i (superior esquerda) ou até i + K - Q (inferior direita)</translation>
    </message>
    <message>
        <source>Device the attention runs on</source>
        <translation>Dispositivo em que a atenção é executada</translation>
    </message>
    <message>
        <source>Floating-point type of the computation; float16 shows the -1e6 fill overflowing</source>
        <translation>Tipo de ponto flutuante do cálculo; float16 mostra o preenchimento -1e6 estourando</translation>
    </message>
    <message>
        <source>Dropout probability on the attention weights (only in training mode)</source>
        <translation>Probabilidade de dropout nos pesos de atenção (só no modo de treinamento)</translation>
    </message>
    <message>
        <source>&amp;Training</source>
        <translation>&amp;Treinamento</translation>
    </message>
    <message>
        <source>Training mode: apply dropout to the weights (evaluation mode ignores it)</source>
        <translation>Modo de treinamento: aplica dropout aos pesos (o modo de avaliação o ignora)</translation>
    </message>
    <message>
        <source>Seed of the dropout mask, so a training-mode picture is reproducible</source>
        <translation>Semente da máscara de dropout, para que uma imagem do modo de treinamento seja reproduzível</translation>
    </message>
    <message>
        <source>&amp;Window</source>
        <translation>&amp;Janela</translation>
    </message>
    <message>
        <source>Sliding window: a query sees the keys within this distance (|i - j| &lt; w; only earlier ones when Causal is on). 0: off</source>
        <translation>Janela deslizante: uma consulta vê as chaves dentro desta distância (|i - j| &lt; w; só as anteriores quando Causal está ativado). 0: desligada</translation>
    </message>
    <message>
        <source>S&amp;inks</source>
        <translation>&amp;Sumidouros</translation>
    </message>
    <message>
        <source>Attention sinks: the first keys every query keeps seeing beside its window (StreamingLLM). Needs a window. 0: off</source>
        <translation>Sumidouros de atenção: as primeiras chaves que toda consulta continua vendo além da sua janela (StreamingLLM). Exige uma janela. 0: desligado</translation>
    </message>
    <message>
        <source>Pre&amp;fix</source>
        <translation>Pre&amp;fixo</translation>
    </message>
    <message>
        <source>Prefix-LM: every query sees the first keys (the prefix), and causally after it. 0: off</source>
        <translation>Prefix-LM: toda consulta vê as primeiras chaves (o prefixo), e causalmente depois dele. 0: desligado</translation>
    </message>
    <message>
        <source>C&amp;hunk</source>
        <translation>&amp;Bloco</translation>
    </message>
    <message>
        <source>Chunked local attention: queries see the keys of their own chunk of this size (causally within it when Causal is on). 0: off</source>
        <translation>Atenção local em blocos: as consultas veem as chaves do seu próprio bloco, deste tamanho (causalmente dentro dele quando Causal está ativado). 0: desligado</translation>
    </message>
    <message>
        <source>Long-context masks</source>
        <translation>Máscaras de contexto longo</translation>
    </message>
    <message>
        <source>Masks of long-context models, combined with padding, causal and the model&apos;s own masks</source>
        <translation>Máscaras de modelos de contexto longo, combinadas com o padding, a máscara causal e as próprias máscaras do modelo</translation>
    </message>
    <message>
        <source>off</source>
        <translation>desligado</translation>
    </message>
    <message>
        <source>&amp;Scoring</source>
        <extracomment>Every setting, in the order the panels show them.</extracomment>
        <translation>&amp;Pontuação</translation>
    </message>
    <message>
        <source>&amp;Hidden size</source>
        <translation>Tamanho &amp;oculto</translation>
    </message>
    <message>
        <source>&amp;Parameter seed</source>
        <translation>Semente (p&amp;arâmetros)</translation>
    </message>
    <message>
        <source>&amp;Valid lengths</source>
        <translation>Comprimentos &amp;válidos</translation>
    </message>
    <message>
        <source>&amp;Mask mode</source>
        <translation>&amp;Modo de máscara</translation>
    </message>
    <message>
        <source>&amp;Causal</source>
        <translation>Ca&amp;usal</translation>
    </message>
    <message>
        <source>&amp;Device</source>
        <translation>&amp;Dispositivo</translation>
    </message>
    <message>
        <source>D&amp;type</source>
        <translation>D&amp;type</translation>
    </message>
    <message>
        <source>D&amp;ropout</source>
        <translation>D&amp;ropout</translation>
    </message>
    <message>
        <source>Dropout s&amp;eed</source>
        <translation>S&amp;emente do dropout</translation>
    </message>
</context>
<context>
    <name>Snippet</name>
    <message>
        <source>unknown framework {name}: expected one of {choices}</source>
        <extracomment>Every framework a snippet can be written in, the default first. Their names as the menus show them (proper names: not translated).</extracomment>
        <translation>framework desconhecido {name}: esperado um destes: {choices}</translation>
    </message>
    <message>
        <source>the scoring function {name} has no {framework} code: it is not one of attnviz&apos;s own</source>
        <extracomment>How an array becomes a tensor: the compute dtype, a parameter&apos;s own dtype, whole numbers, booleans. The packages the snippet imports (&quot;torch and numpy&quot;). The snippet&apos;s imports after the standard library&apos;s. The name numpy goes by in the snippet (MXNet&apos;s own numpy takes &quot;np&quot;). The dtypes this framework computes in; another is computed in float32 and said so.</extracomment>
        <translation>a função de pontuação {name} não tem código {framework}: ela não é uma das do attnviz</translation>
    </message>
    <message>
        <source>the mask mode {name} has no {framework} code</source>
        <translation>o modo de máscara {name} não tem código {framework}</translation>
    </message>
    <message>
        <source>this call&apos;s scores go through the model&apos;s {terms}, which the chapter&apos;s {framework} code does not compute; the attnviz script does</source>
        <translation>os escores desta chamada passam pelo {terms} do modelo, que o código {framework} do capítulo não calcula; o script do attnviz calcula</translation>
    </message>
    <message>
        <source>this call recorded its attention weights only: there are no queries and keys to write as code</source>
        <extracomment>The scoring functions and mask modes the framework generators write out. Dot-product scorings: the factor the dot products are multiplied by (SDPA&apos;s ``scale``); None: the scoring&apos;s own (1/sqrt(d) for scaled_dot, none for dot). For the attnviz script, which calls attnviz itself: the parameters came from the user (else from ``param_seed``), the dropout seed, the masks as the app passes them to ``attend`` (torch&apos;s dtypes kept as numpy ones), and the weights the app showed. The settings&apos; long-context masks as ``engine.make_mask`` keywords (window, sinks, prefix, chunk: ints; documents: an array), which the attnviz script passes as ``mask=make_mask(...)``. A model run&apos;s head on show (&quot;head 3 of call 1, encoder.layer.1.attention.self&quot;), or None.</extracomment>
        <translation>esta chamada gravou só os pesos de atenção: não há consultas nem chaves para escrever como código</translation>
    </message>
    <message>
        <source>attnviz cannot compute these inputs: {error}</source>
        <translation>o attnviz não consegue calcular estas entradas: {error}</translation>
    </message>
    <message>
        <source>a learnable parameter named {name} cannot be written as code</source>
        <translation>um parâmetro aprendível chamado {name} não pode ser escrito como código</translation>
    </message>
    <message>
        <source>this call&apos;s scores go through the model&apos;s {name}, a function of its own that cannot be written as code: copied, the code would not give the weights on show</source>
        <translation>os escores desta chamada passam pelo {name} do modelo, uma função própria que não pode ser escrita como código: copiado, o código não daria os pesos em exibição</translation>
    </message>
</context>
<context>
    <name>Teaching</name>
    <message>
        <source>Pitfall: a valid length of 0</source>
        <extracomment>The settings each lesson&apos;s question asks to switch, by lesson (``Lesson.asks``).</extracomment>
        <translation>Armadilha: um comprimento válido 0</translation>
    </message>
    <message>
        <source>Batch element 0 has valid length 0: no key is valid for its queries.</source>
        <translation>O elemento 0 do lote tem comprimento válido 0: nenhuma chave é válida para suas consultas.</translation>
    </message>
    <message>
        <source>Batch element 0 has a valid length of 0. What weights and output do its queries get with the book&apos;s -1e6 fill? Switch the mask mode to the -inf fill and to PyTorch SDPA: what changes?</source>
        <translation>O elemento 0 do lote tem comprimento válido 0. Que pesos e que saída suas consultas recebem com o preenchimento -1e6 do livro? Troque o modo de máscara para o preenchimento -inf e para o SDPA do PyTorch: o que muda?</translation>
    </message>
    <message>
        <source>With the book&apos;s fill every score of the row becomes -1e6, all equal, so the softmax gives uniform weights, 1/4 on each of the 4 keys, padding included, and the output is the mean of all value vectors, [3, 4]: a confident-looking answer built from padding. A plain -inf fill makes every score -inf and the softmax computes 0/0: the row is NaN, and the NaN spreads into everything computed from it. PyTorch&apos;s scaled_dot_product_attention (2.5 and later) and the strict mode give the row zero weights and a zero output. None of the three is &apos;right&apos;; a row with nothing to attend to has to be handled on purpose.</source>
        <translation>Com o preenchimento do livro, toda pontuação da linha vira -1e6, todas iguais, então o softmax dá pesos uniformes, 1/4 em cada uma das 4 chaves, padding incluído, e a saída é a média de todos os vetores de valor, [3, 4]: uma resposta de aparência confiável feita de padding. Um preenchimento -inf simples faz toda pontuação virar -inf e o softmax calcula 0/0: a linha vira NaN, e o NaN se espalha por tudo o que for calculado a partir dela. O scaled_dot_product_attention do PyTorch (2.5 ou posterior) e o modo estrito dão à linha pesos zero e saída zero. Nenhum dos três é o &apos;certo&apos;; uma linha sem nada a que prestar atenção precisa ser tratada de propósito.</translation>
    </message>
    <message>
        <source>Pitfall: boolean mask of the wrong polarity</source>
        <translation>Armadilha: máscara booleana com a polaridade errada</translation>
    </message>
    <message>
        <source>A True = attend mask read by an API where True = ignore.</source>
        <translation>Uma máscara True = prestar atenção lida por uma API em que True = ignorar.</translation>
    </message>
    <message>
        <source>The mask says &apos;True = this key may be attended&apos; and is handed to an API that reads True as &apos;ignore this key&apos; (nn.MultiheadAttention&apos;s key_padding_mask does). Which keys get the weight now? What happens to batch element 1, whose 4 keys are all valid?</source>
        <translation>A máscara diz &apos;True = esta chave pode receber atenção&apos; e é entregue a uma API que lê True como &apos;ignore esta chave&apos; (a key_padding_mask de nn.MultiheadAttention faz isso). Que chaves recebem o peso agora? O que acontece com o elemento 1 do lote, cujas 4 chaves são todas válidas?</translation>
    </message>
    <message>
        <source>Reading the mask upside down swaps the roles: batch element 0 (valid length 2) puts all its weight on the two padded keys and none on the two real ones. Batch element 1 has no padding, so the inverted mask hides every key: each score is -inf and its rows are NaN. A model trained this way can look fine on full-length sequences in one direction and break in the other, so check the convention of every mask argument you pass.</source>
        <translation>Ler a máscara de cabeça para baixo troca os papéis: o elemento 0 do lote (comprimento válido 2) põe todo o seu peso nas duas chaves de padding e nada nas duas reais. O elemento 1 do lote não tem padding, então a máscara invertida esconde todas as chaves: cada pontuação é -inf e suas linhas viram NaN. Um modelo treinado assim pode parecer bem em sequências de comprimento total em um sentido e quebrar no outro; então confira a convenção de cada argumento de máscara que você passa.</translation>
    </message>
    <message>
        <source>Pitfall: a 1/0 mask passed as a float mask</source>
        <translation>Armadilha: uma máscara 1/0 passada como máscara float</translation>
    </message>
    <message>
        <source>A keep = 1 / drop = 0 mask given where an additive float mask is expected.</source>
        <translation>Uma máscara manter = 1 / descartar = 0 passada onde se espera uma máscara float aditiva.</translation>
    </message>
    <message>
        <source>The mask is the float tensor 1.0 = keep, 0.0 = drop, passed to an API that adds a float mask to the scores (SDPA&apos;s attn_mask, nn.MultiheadAttention&apos;s attn_mask). Is anything masked?</source>
        <translation>A máscara é o tensor float 1.0 = manter, 0.0 = descartar, passado a uma API que soma uma máscara float às pontuações (a attn_mask do SDPA, a attn_mask de nn.MultiheadAttention). Alguma coisa é mascarada?</translation>
    </message>
    <message>
        <source>No. An additive mask is added to the scores: kept keys get +1 and dropped keys +0, so padded keys keep a share of the weight (about 1/e of what they would have against a kept key with the same score). Every row that has padding attends to it. An additive mask must hold 0 for keep and -inf (or a very negative number) for drop; a boolean mask must be bool.</source>
        <translation>Não. Uma máscara aditiva é somada às pontuações: as chaves mantidas ganham +1 e as descartadas +0, então as chaves de padding ficam com uma parte do peso (cerca de 1/e do que teriam diante de uma chave mantida com a mesma pontuação). Toda linha que tem padding presta atenção a ele. Uma máscara aditiva deve conter 0 para manter e -inf (ou um número muito negativo) para descartar; uma máscara booleana deve ser bool.</translation>
    </message>
    <message>
        <source>Pitfall: the -1e6 fill in float16</source>
        <translation>Armadilha: o preenchimento -1e6 em float16</translation>
    </message>
    <message>
        <source>The book&apos;s fill in half precision, with a row that has no valid key.</source>
        <translation>O preenchimento do livro em meia precisão, com uma linha que não tem chave válida.</translation>
    </message>
    <message>
        <source>The computation runs in float16. The largest float16 is 65504: what does the book&apos;s -1e6 fill become, and what happens to batch element 0 (valid length 0)? Compare with float32.</source>
        <translation>O cálculo é feito em float16. O maior float16 é 65504: em que se transforma o preenchimento -1e6 do livro, e o que acontece com o elemento 0 do lote (comprimento válido 0)? Compare com float32.</translation>
    </message>
    <message>
        <source>-1e6 does not fit in float16 and becomes -inf. Rows with some valid key are unaffected (exp(-inf) = 0 is what the fill is for), but a row with no valid key is now all -inf and the softmax turns it into NaN, where float32 gives uniform weights. The same code, a different dtype, a NaN: use a fill from torch.finfo(dtype).min or handle empty rows explicitly.</source>
        <translation>-1e6 não cabe em float16 e vira -inf. As linhas com alguma chave válida não são afetadas (exp(-inf) = 0 é justamente o objetivo do preenchimento), mas uma linha sem chave válida agora é toda -inf e o softmax a transforma em NaN, onde float32 dá pesos uniformes. O mesmo código, outro dtype, um NaN: use um preenchimento a partir de torch.finfo(dtype).min ou trate as linhas vazias explicitamente.</translation>
    </message>
    <message>
        <source>Pitfall: real scores below the -1e6 fill</source>
        <translation>Armadilha: pontuações reais abaixo do preenchimento -1e6</translation>
    </message>
    <message>
        <source>Unscaled dot products of large features: real scores around -2e6.</source>
        <translation>Produtos escalares sem escala de características grandes: pontuações reais por volta de -2e6.</translation>
    </message>
    <message>
        <source>The features are in the thousands and the scores are not scaled, so the real scores are around -2e6 and -1.5e6. The two padded keys are filled with -1e6. Where does the weight go?</source>
        <translation>As características estão na casa dos milhares e as pontuações não são escalonadas, então as pontuações reais ficam por volta de -2e6 e -1.5e6. As duas chaves de padding são preenchidas com -1e6. Para onde vai o peso?</translation>
    </message>
    <message>
        <source>To the padding. The fill is only &apos;very negative&apos; relative to the real scores; here it is larger than every real score, so the two padded keys, both at -1e6, share the row&apos;s weight half and half and the real keys get exactly 0. Exact masking gives all the weight to key 1, whose score is the larger. A fixed fill value silently assumes something about the scale of the scores; -inf (with empty rows handled) assumes nothing.</source>
        <translation>Para o padding. O preenchimento só é &apos;muito negativo&apos; em relação às pontuações reais; aqui ele é maior do que toda pontuação real, então as duas chaves de padding, ambas em -1e6, dividem o peso da linha meio a meio e as chaves reais recebem exatamente 0. O mascaramento exato dá todo o peso à chave 1, cuja pontuação é a maior. Um valor de preenchimento fixo supõe, em silêncio, algo sobre a escala das pontuações; -inf (com as linhas vazias tratadas) não supõe nada.</translation>
    </message>
    <message>
        <source>Pitfall: padded queries are not masked by key masks</source>
        <translation>Armadilha: consultas de padding não são mascaradas por máscaras de chaves</translation>
    </message>
    <message>
        <source>Self-attention over padded sequences: the padded positions also ask queries.</source>
        <translation>Autoatenção sobre sequências com padding: as posições de padding também fazem consultas.</translation>
    </message>
    <message>
        <source>Batch element 0 is a sequence of 2 real tokens padded to 4, used as queries, keys and values. The valid length hides the padded keys. What weights and outputs do the two padded query rows get? Switch the valid lengths to 2-D, where the padded queries have length 0: does that help?</source>
        <translation>O elemento 0 do lote é uma sequência de 2 tokens reais completada com padding até 4, usada como consultas, chaves e valores. O comprimento válido esconde as chaves de padding. Que pesos e saídas as duas linhas de consulta de padding recebem? Troque os comprimentos válidos para 2-D, em que as consultas de padding têm comprimento 0: isso ajuda?</translation>
    </message>
    <message>
        <source>A key mask only removes columns; every query row, padded or not, still gets a full softmax. The padded queries are zero vectors, so they score 0 against both real keys and get weights 1/2 and 1/2, and an output equal to the mean of the two real value vectors, [2, 3]: not zero, and indistinguishable from a real position downstream. With 2-D valid lengths of 0 the book&apos;s fill spreads their weight uniformly over all 4 keys, still a non-zero output; only strict masking (or SDPA) zeroes them. Padded query positions must be dropped after attention, for example by masking the loss.</source>
        <translation>Uma máscara de chaves só remove colunas; toda linha de consulta, de padding ou não, ainda recebe um softmax completo. As consultas de padding são vetores zero, então pontuam 0 contra as duas chaves reais e recebem pesos 1/2 e 1/2, e uma saída igual à média dos dois vetores de valor reais, [2, 3]: não é zero, e adiante não se distingue de uma posição real. Com comprimentos válidos 2-D iguais a 0, o preenchimento do livro espalha o peso delas uniformemente sobre as 4 chaves, ainda com saída não nula; só o mascaramento estrito (ou o SDPA) as zera. As posições de consulta de padding precisam ser descartadas depois da atenção, por exemplo mascarando a perda.</translation>
    </message>
    <message>
        <source>Pitfall: NaN in a padded value vector</source>
        <translation>Armadilha: NaN em um vetor de valor de padding</translation>
    </message>
    <message>
        <source>Padded value vectors hold NaN; the mask hides their keys.</source>
        <translation>Os vetores de valor de padding contêm NaN; a máscara esconde suas chaves.</translation>
    </message>
    <message>
        <source>The padded value vectors contain NaN, and the valid lengths hide those keys, so their weights are exactly 0. Is the output finite?</source>
        <translation>Os vetores de valor de padding contêm NaN, e os comprimentos válidos escondem essas chaves, então seus pesos são exatamente 0. A saída é finita?</translation>
    </message>
    <message>
        <source>Not with the book&apos;s code: the output is weights @ values, and 0 x NaN = NaN, so a zero weight does not remove a NaN; every output row of both batch elements is NaN. Masking acts on the scores, not on the values. The plain -inf fill fails the same way, and so does PyTorch&apos;s own scaled_dot_product_attention. Only a pooling step that skips zero-weight values (attnviz&apos;s strict mode) gives finite outputs; in practice, fill padding with zeros.</source>
        <translation>Não com o código do livro: a saída é pesos @ valores, e 0 x NaN = NaN, então um peso zero não remove um NaN; toda linha de saída dos dois elementos do lote é NaN. O mascaramento age nas pontuações, não nos valores. O preenchimento -inf simples falha do mesmo jeito, e o próprio scaled_dot_product_attention do PyTorch também. Só uma etapa de pooling que pula os valores de peso zero (o modo estrito do attnviz) dá saídas finitas; na prática, preencha o padding com zeros.</translation>
    </message>
    <message>
        <source>Exercise 1: change the keys</source>
        <translation>Exercício 1: mude as chaves</translation>
    </message>
    <message>
        <source>The toy example with distinct keys; queries and keys both of length 2.</source>
        <translation>O exemplo de brinquedo com chaves distintas; consultas e chaves, ambas de comprimento 2.</translation>
    </message>
    <message>
        <source>The book&apos;s toy examples use identical keys. Here the keys differ and queries and keys have the same length, so both additive and scaled dot-product scoring apply. Switch between them: are the attention weights still the same? Why, or why not?</source>
        <translation>Os exemplos de brinquedo do livro usam chaves idênticas. Aqui as chaves diferem e consultas e chaves têm o mesmo comprimento, então tanto a pontuação aditiva quanto a de produto escalar escalonado se aplicam. Alterne entre elas: os pesos de atenção continuam os mesmos? Por que ou por que não?</translation>
    </message>
    <message>
        <source>They are not. With identical keys every valid key gets the same score, whatever the scoring function, so any of them gives uniform weights over the valid keys; that is the only reason the toys agree. With distinct keys the scores depend on the function: scaled dot product measures how well q and k align, q.k / sqrt(d), while additive attention passes W_q q + W_k k through tanh and a learned w_v, whose (here random) parameters decide the ranking. The masking still agrees: both give zero weight past the valid lengths 2 and 6.</source>
        <translation>Não continuam. Com chaves idênticas, toda chave válida recebe a mesma pontuação, qualquer que seja a função de pontuação, então qualquer uma dá pesos uniformes sobre as chaves válidas; esse é o único motivo de os exemplos de brinquedo concordarem. Com chaves distintas, as pontuações dependem da função: o produto escalar escalonado mede o quanto q e k se alinham, q.k / sqrt(d), enquanto a atenção aditiva passa W_q q + W_k k pela tanh e por um w_v aprendido, cujos parâmetros (aqui aleatórios) decidem a ordem. O mascaramento continua concordando: ambas dão peso zero além dos comprimentos válidos 2 e 6.</translation>
    </message>
    <message>
        <source>Exercise 2: queries and keys of different lengths</source>
        <translation>Exercício 2: consultas e chaves de comprimentos diferentes</translation>
    </message>
    <message>
        <source>Queries of length 3, keys of length 5: the dot product is undefined.</source>
        <translation>Consultas de comprimento 3, chaves de comprimento 5: o produto escalar não está definido.</translation>
    </message>
    <message>
        <source>Queries have length 3 and keys length 5, so q.k is undefined (try the dot-product scoring). Using matrix multiplications only, design a scoring function for them.</source>
        <translation>As consultas têm comprimento 3 e as chaves comprimento 5, então q.k não está definido (experimente a pontuação por produto escalar). Usando apenas multiplicações de matrizes, projete uma função de pontuação para elas.</translation>
    </message>
    <message>
        <source>Put a learnable matrix between them: a(q, k) = q^T W k with W of shape (3, 5), the &apos;bilinear&apos; or &apos;general&apos; score. For all pairs at once it is Q W K^T, two matrix products. It is the same as projecting the queries into key space, (W^T q).k, and writing W = W_q^T W_k gives the low-rank form used by multi-head attention, (W_q q).(W_k k). Initialise W with variance 1/(d_q d_k) to keep the scores at unit variance.</source>
        <translation>Ponha uma matriz aprendível entre elas: a(q, k) = q^T W k com W de formato (3, 5), a pontuação &apos;bilinear&apos; ou &apos;geral&apos;. Para todos os pares de uma vez ela é Q W K^T, dois produtos de matrizes. É o mesmo que projetar as consultas no espaço das chaves, (W^T q).k, e escrever W = W_q^T W_k dá a forma de posto baixo usada pela atenção multi-cabeça, (W_q q).(W_k k). Inicialize W com variância 1/(d_q d_k) para manter as pontuações com variância unitária.</translation>
    </message>
    <message>
        <source>Exercise 3: vector summation instead of a dot product</source>
        <translation>Exercício 3: soma de vetores em vez de produto escalar</translation>
    </message>
    <message>
        <source>Three different queries scored by a(q, k) = sum(q + k).</source>
        <translation>Três consultas diferentes pontuadas por a(q, k) = sum(q + k).</translation>
    </message>
    <message>
        <source>Queries and keys have the same length. Is a(q, k) = 1^T (q + k), the sum of q + k, a better scoring function than the dot product? Compare the three query rows with summation and with dot-product scoring.</source>
        <translation>Consultas e chaves têm o mesmo comprimento. a(q, k) = 1^T (q + k), a soma de q + k, é uma função de pontuação melhor do que o produto escalar? Compare as três linhas de consulta com a pontuação por soma e por produto escalar.</translation>
    </message>
    <message>
        <source>No. 1^T(q + k) = 1^T q + 1^T k, and the first term is the same for every key of a query, so the softmax cancels it: the weights depend on the keys alone. All three queries get the same weights and the same output (up to rounding), whatever they are; attention can no longer pick keys per query. The dot product couples q and k, which is what makes the weights query-dependent.</source>
        <translation>Não. 1^T(q + k) = 1^T q + 1^T k, e o primeiro termo é o mesmo para toda chave de uma consulta, então o softmax o cancela: os pesos dependem só das chaves. As três consultas recebem os mesmos pesos e a mesma saída (a menos de arredondamento), quaisquer que sejam; a atenção não consegue mais escolher chaves por consulta. O produto escalar acopla q e k, e é isso que faz os pesos dependerem da consulta.</translation>
    </message>
</context>
<context>
    <name>TeachingDocks</name>
    <message>
        <source>Pipeline: every stage</source>
        <extracomment>Every view&apos;s entry, by object name, in menu order.</extracomment>
        <translation>Pipeline: todas as etapas</translation>
    </message>
    <message>
        <source>Every stage of the computation, with the chapter&apos;s formulas</source>
        <translation>Todas as etapas do cálculo, com as fórmulas do capítulo</translation>
    </message>
    <message>
        <source>&amp;Pipeline view</source>
        <translation>Visão do &amp;pipeline</translation>
    </message>
    <message>
        <source>The parameters are being recomputed; edit them again in a moment</source>
        <translation>Os parâmetros estão sendo recalculados; edite-os de novo em um instante</translation>
    </message>
    <message>
        <source>Edit {names}</source>
        <translation>Editar {names}</translation>
    </message>
    <message>
        <source>Side by side: A vs B</source>
        <translation>Lado a lado: A vs. B</translation>
    </message>
    <message>
        <source>The same inputs under two configurations, and where their weights differ</source>
        <translation>As mesmas entradas sob duas configurações, e onde seus pesos diferem</translation>
    </message>
    <message>
        <source>&amp;Side by side (A vs B)</source>
        <translation>&amp;Lado a lado (A vs. B)</translation>
    </message>
</context>
<context>
    <name>TensorTable</name>
    <message>
        <source>{name} must be a whole number ≥ {bound}, got &apos;{text}&apos;</source>
        <translation>{name} deve ser um número inteiro ≥ {bound}, veio &apos;{text}&apos;</translation>
    </message>
    <message>
        <source>{name} must be a whole number, got &apos;{text}&apos;</source>
        <extracomment>The locale writes decimals with a comma (pt-BR: &quot;0,5&quot;): commas are decimals, not separators. Any float, in a locale that writes decimal points.</extracomment>
        <translation>{name} deve ser um número inteiro, veio &apos;{text}&apos;</translation>
    </message>
    <message>
        <source>&apos;{text}&apos; is not a number</source>
        <translation>&apos;{text}&apos; não é um número</translation>
    </message>
    <message>
        <source>value</source>
        <extracomment>Whole numbers only (read as int64), else any float (&quot;nan&quot; and &quot;inf&quot; included). The smallest value a cell takes (inclusive; NaN never satisfies it), None: any. How messages name the value (&quot;valid length&quot;); a marked source is translated when shown.</extracomment>
        <translation>valor</translation>
    </message>
    <message>
        <source>an empty cell is not a number</source>
        <translation>uma célula vazia não é um número</translation>
    </message>
    <message>
        <source>&apos;{text}&apos; is too large for a whole number</source>
        <translation>&apos;{text}&apos; é grande demais para um número inteiro</translation>
    </message>
    <message>
        <source>{name} must be ≥ {bound}, got &apos;{text}&apos;</source>
        <translation>{name} deve ser ≥ {bound}, veio &apos;{text}&apos;</translation>
    </message>
    <message>
        <source>{n} cell</source>
        <translation>{n} célula</translation>
    </message>
    <message>
        <source>{n} cells</source>
        <translation>{n} células</translation>
    </message>
    <message>
        <source>there is nothing to paste</source>
        <translation>não há nada para colar</translation>
    </message>
    <message>
        <source>row {r} is empty</source>
        <translation>a linha {r} está vazia</translation>
    </message>
    <message>
        <source>rows have different lengths: row {r} has {cells}, row 1 has {first}</source>
        <translation>as linhas têm comprimentos diferentes: a linha {r} tem {cells}, a linha 1 tem {first}</translation>
    </message>
    <message>
        <source>row {r}, column {c}: {error}</source>
        <translation>linha {r}, coluna {c}: {error}</translation>
    </message>
    <message>
        <source>{text} does not fit in {dtype} ({low} to {high})</source>
        <translation>{text} não cabe em {dtype} (de {low} a {high})</translation>
    </message>
    <message>
        <source>{text} is too large for {dtype} (largest is {largest})</source>
        <translation>{text} é grande demais para {dtype} (o maior é {largest})</translation>
    </message>
    <message>
        <source>an edit must be a non-empty 2-D block, got {shape}</source>
        <translation>uma edição deve ser um bloco 2-D não vazio, veio {shape}</translation>
    </message>
    <message>
        <source>a {height}×{width} block at row {row}, column {col} does not fit in the {rows}×{cols} table</source>
        <translation>um bloco {height}×{width} na linha {row}, coluna {col} não cabe na tabela {rows}×{cols}</translation>
    </message>
    <message>
        <source>cannot store values of type {dtype}</source>
        <translation>não é possível guardar valores do tipo {dtype}</translation>
    </message>
    <message>
        <source>Type a number to edit a cell; Enter commits and moves down, Tab moves right.
Ctrl+C copies the selected rectangle as tab-separated text (full precision).
Ctrl+V pastes a block from a spreadsheet or text at the selection&apos;s top-left cell;
a single value pasted into a selection fills it.
Delete sets the selected cells to 0.</source>
        <translation>Digite um número para editar uma célula; Enter confirma e desce, Tab vai para a direita.
Ctrl+C copia o retângulo selecionado como texto separado por tabulações (precisão total).
Ctrl+V cola um bloco de uma planilha ou texto na célula superior esquerda da seleção;
um único valor colado em uma seleção a preenche.
Delete põe 0 nas células selecionadas.</translation>
    </message>
    <message>
        <source>Select all cells</source>
        <extracomment>What this table holds, said before the help in its tooltip (a marked source).</extracomment>
        <translation>Selecionar todas as células</translation>
    </message>
    <message>
        <source>the clipboard has no text to paste</source>
        <translation>a área de transferência não tem texto para colar</translation>
    </message>
    <message>
        <source>cannot paste: {error}</source>
        <translation>não é possível colar: {error}</translation>
    </message>
    <message>
        <source>select a cell to paste into</source>
        <translation>selecione uma célula onde colar</translation>
    </message>
    <message>
        <source>cannot paste outside the table</source>
        <translation>não é possível colar fora da tabela</translation>
    </message>
    <message>
        <source>pasted block is {height}×{width} but only {fit_rows}×{fit_cols} fits from {cell}; the rest was dropped</source>
        <translation>o bloco colado é {height}×{width}, mas só {fit_rows}×{fit_cols} cabe a partir de {cell}; o resto foi descartado</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Copiar</translation>
    </message>
    <message>
        <source>Paste</source>
        <translation>Colar</translation>
    </message>
    <message>
        <source>Set to 0</source>
        <translation>Pôr 0</translation>
    </message>
</context>
<context>
    <name>TokensView</name>
    <message>
        <source>&amp;Queries (click, shift-click; type to search)</source>
        <extracomment>The top-k table holds at most this many keys.</extracomment>
        <translation>&amp;Consultas (clique, Shift+clique; digite para buscar)</translation>
    </message>
    <message>
        <source>&amp;Keys (click, shift-click; type to search)</source>
        <translation>C&amp;haves (clique, Shift+clique; digite para buscar)</translation>
    </message>
    <message>
        <source>Search tokens</source>
        <translation>Buscar tokens</translation>
    </message>
    <message>
        <source>Keys the first selected query looks at most</source>
        <translation>Chaves para as quais a primeira consulta selecionada mais olha</translation>
    </message>
    <message>
        <source>to&amp;p</source>
        <translation>to&amp;p</translation>
    </message>
    <message>
        <source>key</source>
        <translation>chave</translation>
    </message>
    <message>
        <source>token</source>
        <translation>token</translation>
    </message>
    <message>
        <source>weight</source>
        <translation>peso</translation>
    </message>
    <message>
        <source>Attention the selected queries send, per key</source>
        <translation>Atenção que as consultas selecionadas enviam, por chave</translation>
    </message>
    <message>
        <source>Select queries on the left: the attention they send, per key</source>
        <translation>Selecione consultas à esquerda: a atenção que elas enviam, por chave</translation>
    </message>
    <message>
        <source>Attention the selected keys receive, per query</source>
        <translation>Atenção que as chaves selecionadas recebem, por consulta</translation>
    </message>
    <message>
        <source>Select keys on the left: the attention they receive, per query</source>
        <translation>Selecione chaves à esquerda: a atenção que elas recebem, por consulta</translation>
    </message>
</context>
<context>
    <name>Undo</name>
    <message>
        <source>Edit 1 cell of {role}</source>
        <translation>Editar 1 célula de {role}</translation>
    </message>
    <message>
        <source>Edit {n} cells of {role}</source>
        <translation>Editar {n} células de {role}</translation>
    </message>
    <message>
        <source>Edit</source>
        <extracomment>Shape limits of the editor. The engine takes anything; a table of a million rows does not help anyone, and these keep a typo in a spin box from asking for terabytes. Tensors loaded from files, captures or scripts may be longer than the editor makes them: the main view then refuses every stage at once (the memory budget) and the long-context view streams them. The bound keeps a typo&apos;d or hostile file from asking for absurd lengths. Long-context masks (0 = off), combined with every other mask (``engine.mask_mods``): a sliding window of this many keys (causal when the call is), attention sinks (the first keys, with a window), a prefix-LM prefix, chunked local attention. Let NaN/Inf through to the engine (to show what masking does not remove); else refused. The settings a model&apos;s run is shown with: scaled dot-product scoring, masks applied exactly as SDPA applies them, no valid lengths (a model masks with its own masks). What ``SetSettings`` writes into a call rather than into ``Settings``: each call of a model has its own causal flag and scale (the book&apos;s one call too). The name of the book&apos;s one call (a model&apos;s calls are named by its code).</extracomment>
        <translation>Editar</translation>
    </message>
    <message>
        <source>Change</source>
        <extracomment>The (layer, head) the block belongs to (None: the one on show when applied).</extracomment>
        <translation>Alterar</translation>
    </message>
    <message>
        <source>Change setting</source>
        <translation>Alterar configuração</translation>
    </message>
</context>
</TS>
